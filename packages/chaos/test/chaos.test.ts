import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChaosBroker, startBroker } from '../src/brokers.js';
import { formatSummary } from '../src/checker.js';
import { runOnce } from '../src/run.js';

/**
 * The bounded fault sample in CI: one seed per stack with every worker and receiver kill point,
 * a SIGSTOP past the lock and (RabbitMQ) two broker restarts. With the same-transaction helper
 * nothing is lost and no effect is doubled.
 */
const EVENTS = 120;

describe('seeded fault sample, same-transaction helper', () => {
  it('embedded default: lost 0, doubled 0 under worker and receiver kills and a SIGSTOP', async () => {
    await using broker = await startBroker('embedded');
    const summary = await runOnce({
      stack: 'embedded',
      mode: 'helper',
      seed: 4242,
      events: EVENTS,
      broker,
      log: () => {},
    });
    console.log(formatSummary(summary).join('\n'));
    expect(summary.accepted).toBe(EVENTS);
    expect({
      lost: summary.lost,
      doubled: summary.doubled,
      unexpected: summary.unexpected,
    }).toEqual({
      lost: 0,
      doubled: 0,
      unexpected: 0,
    });
    expect(summary.faults.filter((f) => f.includes('SIGKILL')).length).toBeGreaterThanOrEqual(3);
  }, 240_000);

  describe('RabbitMQ (the harness’s own node)', () => {
    let broker: ChaosBroker;
    beforeAll(async () => {
      broker = await startBroker('rabbitmq');
    }, 240_000);
    afterAll(async () => {
      await broker?.[Symbol.asyncDispose]();
    }, 60_000);

    it('lost 0, doubled 0 under kills, a SIGSTOP and two broker restarts', async () => {
      const summary = await runOnce({
        stack: 'rabbitmq',
        mode: 'helper',
        seed: 4243,
        events: EVENTS,
        broker,
        log: () => {},
      });
      console.log(formatSummary(summary).join('\n'));
      expect(summary.accepted).toBe(EVENTS);
      expect({
        lost: summary.lost,
        doubled: summary.doubled,
        unexpected: summary.unexpected,
      }).toEqual({
        lost: 0,
        doubled: 0,
        unexpected: 0,
      });
      expect(summary.faults.filter((f) => f.startsWith('broker restarted')).length).toBe(2);
    }, 300_000);
  });
});
