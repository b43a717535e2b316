import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';

// The demo is an example that runs as a test, once per broker: signed deliveries, duplicates,
// forgeries, poison, and a worker SIGKILLed twice mid-batch; then a run whose workers die in the
// two windows the event record must make harmless. What the killed worker held comes
// back when its lock runs out: a lease (embedded), a job lock (BullMQ), the connection
// (RabbitMQ), the group membership (Kafka) or the visibility timeout (SQS).
const brokers = [
  ['embedded', 'the embedded default'],
  ['bullmq', 'BullMQ (the shared Redis), with the Redis inbox'],
  ['rabbitmq', 'RabbitMQ (the shared server)'],
  ['kafka', 'Kafka (started by the brokers script)'],
  ['sqs', 'SQS (ElasticMQ, started by the brokers script)'],
] as const;

describe.each(brokers)('demo on %s: %s', (broker) => {
  it('loses nothing and doubles nothing while the worker is killed mid-batch', async () => {
    const summary = await runDemo({ broker, events: 160, kill: true, log: () => {} });
    expect(summary.workerKills).toBe(2);
    expect(summary.notAccepted, JSON.stringify(summary.statuses)).toBe(0);
    expect(summary.lost).toBe(0);
    expect(summary.doubled).toBe(0);
    expect(summary.poisonNotDeadLettered).toBe(0);
    expect(summary.deadLettered).toBe(3);
    expect(summary.processed).toBe(160 + 40);
    // every charged payment's outbound event, from the outbox, handled once
    expect(summary.outboundLost).toBe(0);
    expect(summary.outboundProcessed).toBe(160);
    expect(summary.duplicatesSuppressed).toBeGreaterThan(0);
    expect(summary.rejected).toBeGreaterThan(0);
    expect(summary.chargesMade).toBe(160);
  }, 180_000);

  it('loses nothing and doubles nothing when a worker dies after a charge and after recording a dead letter', async () => {
    // The first worker SIGKILLs itself right after its 20th charge, before the ledger row and the
    // event record are written (the charge is made again on redelivery, with the same
    // Idempotency-Key); the second right after it recorded its first dead letter, before the
    // broker was told (the redelivered copy is acked: the record already holds it).
    const summary = await runDemo({
      broker,
      events: 160,
      kill: false,
      dieAt: ['charge:20', 'dead-letter:1'],
      log: () => {},
    });
    expect(summary.workerKills).toBe(2);
    expect(summary.notAccepted, JSON.stringify(summary.statuses)).toBe(0);
    expect(summary.lost).toBe(0);
    expect(summary.doubled).toBe(0);
    expect(summary.deadLettered).toBe(3);
    expect(summary.processed).toBe(160 + 40);
    expect(summary.outboundLost).toBe(0);
    expect(summary.outboundProcessed).toBe(160);
    expect(summary.chargesMade).toBe(160);
  }, 180_000);
});
