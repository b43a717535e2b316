import type { EventHandler } from '@onceflow/core';
import fc from 'fast-check';
import { describeFault, type Fault, type FaultKind } from './faults.js';
import { historyArbitrary, type History } from './history.js';
import {
  runSimulation,
  type SimEvent,
  type SimStore,
  type SimulationOptions,
  type SimulationResult,
} from './simulation.js';
import { formatTimeline, type TimelineStep } from './timeline.js';
import { EffectivelyOnceViolation } from './violation.js';

/** An invariant's answer: nothing or `true` when it holds; `false` or what is wrong when not. */
// biome-ignore lint/suspicious/noConfusingVoidType: an invariant that returns nothing holds
export type InvariantAnswer = void | boolean | string;

/** Your invariant on your own state after a run; a throw fails it too, with its message. */
export type Invariant<S> = (
  state: S,
  run: SimulationResult,
) => InvariantAnswer | Promise<InvariantAnswer>;

/** What `checkEffectivelyOnce` takes besides the handlers; `S` is your state for one run. */
export interface CheckOptions<S> {
  /** The events every history publishes, or a fast-check arbitrary of them. */
  readonly events: readonly SimEvent[] | fc.Arbitrary<readonly SimEvent[]>;
  /** Fresh state for one run (an empty ledger, a new SQLite file, a truncated table). */
  readonly setup?: (() => S | Promise<S>) | undefined;
  /** The invariant on `state` after each run. */
  readonly invariant: Invariant<S>;
  /**
   * The worker's record store for one run, from its state (`embedded.records`, a PostgreSQL
   * store): needed for the same-transaction marks. Default a fresh memory store.
   */
  readonly records?: ((state: S) => SimStore) | undefined;
  /** Closes what `setup` opened; runs after every run, failed or not. */
  readonly teardown?: ((state: S) => void | Promise<void>) | undefined;
  /** Histories to try. Default 100. */
  readonly numRuns?: number | undefined;
  /** fast-check's seed (default random; printed with a failure) and, to replay one, its path. */
  readonly seed?: number | undefined;
  /** With `seed`, replays a failure's history first (its `replay.path`). */
  readonly path?: string | undefined;
  /** Which faults to draw. Default all (`FAULT_KINDS`). */
  readonly faults?: readonly FaultKind[] | undefined;
  /** Most faults in one history. Default 3. */
  readonly maxFaults?: number | undefined;
  /** Passed to each run (`runSimulation`). */
  readonly simulation?:
    | Pick<
        SimulationOptions,
        'lockMs' | 'retry' | 'retention' | 'spacingMs' | 'maxDeliveries' | 'middleware'
      >
    | undefined;
}

/** The handlers under test: one, a list, or a function of the run's fresh state. */
export type HandlersFor<S> =
  | EventHandler
  | readonly EventHandler[]
  | ((state: S) => EventHandler | readonly EventHandler[]);

/** A failed run, carried through fast-check to the report. */
class RunFailure extends Error {
  constructor(
    readonly reason: string,
    readonly faults: readonly Fault[],
    readonly timeline: readonly TimelineStep[],
  ) {
    super(reason);
  }
}

const SLOTS = Array.from({ length: 8 }, (_, i) => `slot:${i}`);

/** The history with each slot replaced by the id of the event in that place (modulo the list). */
function resolveSlots(history: History, events: readonly SimEvent[]): History {
  const idOf = (slot: string) =>
    events[Number(slot.slice(5)) % Math.max(1, events.length)]?.id ?? slot;
  return {
    seed: history.seed,
    faults: history.faults.map((f) => ('event' in f ? { ...f, event: idOf(f.event) } : f)),
  };
}

const asList = (h: EventHandler | readonly EventHandler[]): readonly EventHandler[] =>
  Array.isArray(h) ? h : [h as EventHandler];

async function verdict<S>(invariant: Invariant<S>, state: S, run: SimulationResult) {
  try {
    const answer = await invariant(state, run);
    if (answer === false) return 'the invariant returned false';
    if (typeof answer === 'string') return answer;
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * A property test of your handlers: fast-check generates delivery histories (duplicates,
 * reordering, crashes before the handler, after its effect and after the record, lock expiry
 * mid-handler, transient failures, broker and store outages), each run goes through the real
 * worker over the simulation (`runSimulation`), and `invariant` is checked on your state. On a
 * failure fast-check shrinks the history to the fewest faults that still break it, and this
 * rejects with an `EffectivelyOnceViolation` whose message is that run's timeline, one line per
 * step, naming the fault.
 *
 * Every run must also settle (every event acked, as completed or dead-lettered) within the
 * simulation's `maxDeliveries`.
 *
 * @example
 * await checkEffectivelyOnce((ledger: Ledger) => [onPayment(ledger)], {
 *   events: [{ id: 'evt_1', type: 'payment', key: 'acct_1', payload: { amount: 5 } }],
 *   setup: () => new Ledger(),
 *   invariant: (ledger) => ledger.rowsFor('evt_1') === 1 || `${ledger.rowsFor('evt_1')} rows for evt_1`,
 * });
 */
export async function checkEffectivelyOnce<S = undefined>(
  handlers: HandlersFor<S>,
  options: CheckOptions<S>,
): Promise<void> {
  const sim = options.simulation ?? {};
  const shape = {
    kinds: options.faults,
    maxFaults: options.maxFaults,
    spacingMs: sim.spacingMs ?? 100,
    lockMs: sim.lockMs ?? 30_000,
  };
  // Fixed events: faults name them. Generated ones: faults name one of `SLOTS` places, resolved
  // against each list (slot modulo its length), so the list and the faults shrink independently.
  const cases = Array.isArray(options.events)
    ? historyArbitrary(
        (options.events as readonly SimEvent[]).map((e) => e.id),
        shape,
      ).map((history) => ({ events: options.events as readonly SimEvent[], history }))
    : fc
        .tuple(options.events as fc.Arbitrary<readonly SimEvent[]>, historyArbitrary(SLOTS, shape))
        .map(([events, history]) => ({ events, history: resolveSlots(history, events) }));

  const runOne = async (events: readonly SimEvent[], history: History): Promise<void> => {
    const state = (await options.setup?.()) as S;
    try {
      const result = await runSimulation({
        ...sim,
        handlers: asList(typeof handlers === 'function' ? handlers(state) : handlers),
        events,
        faults: history.faults,
        seed: history.seed,
        records: options.records?.(state),
      });
      const reason = result.settled
        ? await verdict(options.invariant, state, result)
        : `did not settle within ${sim.maxDeliveries ?? 10_000} deliveries`;
      if (reason !== undefined) throw new RunFailure(reason, history.faults, result.timeline);
    } finally {
      await options.teardown?.(state);
    }
  };

  const property = fc.asyncProperty(cases, ({ events, history }) => runOne(events, history));
  const details = await fc.check(property, {
    numRuns: options.numRuns ?? 100,
    seed: options.seed,
    path: options.path,
    endOnFailure: false,
  });
  if (!details.failed) return;
  const failure = details.errorInstance;
  if (!(failure instanceof RunFailure)) {
    throw failure instanceof Error ? failure : new Error(String(failure));
  }
  const replay = { seed: details.seed, path: details.counterexamplePath ?? '' };
  const faults =
    failure.faults.length === 0
      ? '  (none: it fails without a fault)'
      : failure.faults
          .map(
            (f) =>
              `  - ${'event' in f ? `${f.event}: ` : ''}${describeFault(f)}${'delivery' in f ? ` (delivery ${f.delivery})` : ''}`,
          )
          .join('\n');
  const message = [
    `effectively-once check failed: ${failure.reason}`,
    `after ${details.numRuns} runs, shrunk ${details.numShrinks} times; replay with { seed: ${replay.seed}, path: '${replay.path}' }`,
    'faults:',
    faults,
    'timeline:',
    formatTimeline(failure.timeline),
    `invariant: ${failure.reason}`,
  ].join('\n');
  throw new EffectivelyOnceViolation(message, {
    reason: failure.reason,
    faults: failure.faults,
    timeline: failure.timeline,
    replay,
  });
}
