import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';

// The demo is an example that runs as a test: signed deliveries, duplicates, forgeries, poison,
// and a worker SIGKILLed twice mid-batch, on the embedded default.
describe('demo on the embedded default', () => {
  it('loses nothing and doubles nothing while the worker is killed mid-batch', async () => {
    const summary = await runDemo({ broker: 'embedded', events: 160, kill: true, log: () => {} });
    expect(summary.workerKills).toBe(2);
    expect(summary.lost).toBe(0);
    expect(summary.doubled).toBe(0);
    expect(summary.poisonNotDeadLettered).toBe(0);
    expect(summary.deadLettered).toBe(3);
    expect(summary.processed).toBe(160 + 40);
    expect(summary.duplicatesSuppressed).toBeGreaterThan(0);
    expect(summary.rejected).toBeGreaterThan(0);
    expect(summary.chargesMade).toBe(160);
  }, 180_000);
});
