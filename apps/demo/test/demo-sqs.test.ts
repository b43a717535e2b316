import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';

// The demo on SQS (ElasticMQ started by the brokers script): signed deliveries, duplicates, forgeries, poison, and a worker
// SIGKILLed twice mid-batch (its messages return when their visibility timeout runs out).
describe('demo on SQS (ElasticMQ)', () => {
  it('loses nothing and doubles nothing while the worker is killed mid-batch', async () => {
    const summary = await runDemo({ broker: 'sqs', events: 160, kill: true, log: () => {} });
    expect(summary.workerKills).toBe(2);
    expect(summary.lost).toBe(0);
    expect(summary.doubled).toBe(0);
    expect(summary.poisonNotDeadLettered).toBe(0);
    expect(summary.deadLettered).toBe(3);
    expect(summary.processed).toBe(160 + 40);
    expect(summary.chargesMade).toBe(160);
  }, 180_000);
});
