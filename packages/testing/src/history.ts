import fc from 'fast-check';
import { type CrashPoint, type Fault, FAULT_KINDS, type FaultKind } from './faults.js';

/** One generated delivery history: the jitter seed and the faults, over a list of events. */
export interface History {
  /** Seeds the run's backoff jitter. */
  readonly seed: number;
  /** What goes wrong in the run, in no particular order. */
  readonly faults: readonly Fault[];
}

/** How `historyArbitrary` draws: which faults, how many, over what span of time. */
export interface HistoryShape {
  /** Which faults to draw. Default every kind (`FAULT_KINDS`). */
  readonly kinds?: readonly FaultKind[] | undefined;
  /** Most faults in one history. Default 3. */
  readonly maxFaults?: number | undefined;
  /** The runs' `spacingMs`: delays and outages are drawn within the publishing span. */
  readonly spacingMs: number;
  /** The runs' `lockMs`: duplicates are drawn within two locks of the publish. */
  readonly lockMs: number;
}

/** Crashes and lock expiry, the faults that run a handler twice, are drawn most often. */
const WEIGHTS: Record<FaultKind, number> = {
  duplicate: 2,
  delay: 2,
  crash: 3,
  'lock-expiry': 3,
  fail: 1,
  'broker-outage': 1,
  'store-outage': 1,
};

const CRASH_POINTS: readonly CrashPoint[] = ['before-handler', 'after-effect', 'after-record'];

/**
 * Histories over the events `ids`, for fast-check. Each fault shrinks on its own (to the first
 * event, its first delivery, the shortest delay), and the list shrinks by dropping faults, so a
 * counterexample ends up with the faults it needs and no others. Outages stay short of the
 * worker's default retry budget (10 s), so an event is never dead-lettered by an outage alone.
 */
export function historyArbitrary(
  ids: readonly string[],
  shape: HistoryShape,
): fc.Arbitrary<History> {
  const kinds = shape.kinds ?? FAULT_KINDS;
  const span = Math.max(1, ids.length) * shape.spacingMs;
  const event = fc.constantFrom(...ids);
  // Most faults hit an event's first delivery, which every history has.
  const delivery = fc.oneof(
    { arbitrary: fc.constant(1), weight: 4 },
    { arbitrary: fc.integer({ min: 2, max: 3 }), weight: 2 },
  );
  const outage = {
    atMs: fc.integer({ min: 0, max: span + shape.lockMs }),
    forMs: fc.integer({ min: 1, max: 10_000 }),
  };
  const byKind: Record<FaultKind, fc.Arbitrary<Fault>> = {
    duplicate: fc.record({
      kind: fc.constant('duplicate'),
      event,
      afterMs: fc.integer({ min: 0, max: 2 * shape.lockMs }),
    }),
    delay: fc.record({ kind: fc.constant('delay'), event, ms: fc.integer({ min: 1, max: span }) }),
    crash: fc.record({
      kind: fc.constant('crash'),
      event,
      delivery,
      point: fc.constantFrom(...CRASH_POINTS),
    }),
    'lock-expiry': fc.record({
      kind: fc.constant('lock-expiry'),
      event,
      delivery,
      point: fc.constantFrom('before-handler' as const, 'after-handler' as const),
    }),
    fail: fc.record({ kind: fc.constant('fail'), event, delivery }),
    'broker-outage': fc.record({ kind: fc.constant('broker-outage'), ...outage }),
    'store-outage': fc.record({ kind: fc.constant('store-outage'), ...outage }),
  };
  const fault = fc.oneof(...kinds.map((k) => ({ arbitrary: byKind[k], weight: WEIGHTS[k] })));
  return fc.record({
    seed: fc.integer({ min: 0, max: 0x7fffffff }),
    faults: fc.array(fault, { maxLength: shape.maxFaults ?? 3 }),
  });
}

/**
 * One history drawn from `seed`: faults injected by seed for `runSimulation`, the same seed
 * giving the same faults and jitter seed. Spread it into the options.
 *
 * @example
 * const result = await runSimulation({ handlers, events, ...sampleHistory(events.map((e) => e.id), 7) });
 */
export function sampleHistory(
  ids: readonly string[],
  seed: number,
  shape: Partial<HistoryShape> = {},
): History {
  const arbitrary = historyArbitrary(ids, { spacingMs: 100, lockMs: 30_000, ...shape });
  const [history] = fc.sample(arbitrary, { seed, numRuns: 1 });
  return history as History;
}
