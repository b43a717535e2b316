import { expect, it } from 'vitest';
import { startBroker, startPostgres } from '../src/brokers.js';
import { formatSummary } from '../src/checker.js';
import { runOnce } from '../src/run.js';
import type { StackName } from '../src/stack.js';

/** One bounded fault sample: a stack, a seed, a few dozen events, the helper handler. */
export interface FaultSample {
  readonly stack: StackName;
  readonly seed: number;
  readonly events: number;
  /** Runs the inbox, record and ledger on a PostgreSQL of the harness's own, restarted once. */
  readonly restartPostgres?: boolean | undefined;
  readonly timeoutMs: number;
}

/**
 * Declares the sample as a test: every worker and receiver kill point, a receiver SIGKILLed by
 * the harness, a SIGSTOP past the lock, the harness's own broker restarted at a third and a half
 * (where it restarts) and, with `restartPostgres`, PostgreSQL stopped and started again. With
 * the same-transaction helper nothing is lost or doubled, and while PostgreSQL is down the
 * receivers answer 503.
 */
export function faultSample(sample: FaultSample): void {
  const { stack, seed, events, restartPostgres = false } = sample;
  const faults = [
    'kills',
    'a SIGSTOP',
    ...(stack === 'embedded' ? [] : ['two broker restarts']),
    ...(restartPostgres ? ['a PostgreSQL restart'] : []),
  ].join(', ');
  it(
    `${stack}, same-transaction helper: lost 0, doubled 0 under ${faults}`,
    async () => {
      await using broker = await startBroker(stack);
      await using postgres = restartPostgres ? await startPostgres() : undefined;
      const summary = await runOnce({
        stack,
        mode: 'helper',
        seed,
        events,
        broker,
        postgres,
        log: () => {},
      });
      console.log(formatSummary(summary).join('\n'));
      expect(summary.accepted).toBe(events);
      expect({
        lost: summary.lost,
        doubled: summary.doubled,
        unexpected: summary.unexpected,
        gaveUp: summary.gaveUp,
        forgedAccepted: summary.forgedAccepted,
        outageMisanswers: summary.outageMisanswers,
      }).toEqual({
        lost: 0,
        doubled: 0,
        unexpected: 0,
        gaveUp: 0,
        forgedAccepted: 0,
        outageMisanswers: 0,
      });
      expect(summary.faults.filter((f) => f.includes('SIGKILL')).length).toBeGreaterThanOrEqual(6);
      expect(summary.faults.some((f) => f.startsWith('SIGSTOP'))).toBe(true);
      expect(summary.faults.filter((f) => f.startsWith('broker restarted')).length).toBe(
        broker.restartable ? 2 : 0,
      );
      if (restartPostgres) {
        expect(summary.faults.some((f) => f.startsWith('PostgreSQL stopped'))).toBe(true);
        expect(summary.outageAnswers?.['503'] ?? 0).toBeGreaterThan(0);
      }
    },
    sample.timeoutMs,
  );
}
