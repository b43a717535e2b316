import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/run.js';

// Memory stays flat: the worker's live heap (sampled after a full GC) must not grow with the
// number of events it has handled.
describe('demo worker memory', () => {
  it('keeps the worker heap flat over 10,000 events', async () => {
    const summary = await runDemo({
      broker: 'embedded',
      events: 10_000,
      kill: false,
      // The heap over the inbound path; the outbound step has its own tests (demo.test.ts).
      outbound: false,
      log: () => {},
    });
    expect(summary.notAccepted, JSON.stringify(summary.statuses)).toBe(0);
    expect(summary.lost).toBe(0);
    expect(summary.doubled).toBe(0);
    expect(summary.processed).toBe(12_500);
    expect(summary.workerHeapEarlyMiB).toBeGreaterThan(0);
    expect(summary.workerHeapLateMiB - summary.workerHeapEarlyMiB).toBeLessThan(8);
  }, 600_000);
});
