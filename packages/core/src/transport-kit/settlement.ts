import type { ErrorInfo } from '../errors.js';

/** Options of `Delivery.retry`. */
export interface RetryOptions {
  readonly delayMs: number;
  readonly error?: ErrorInfo | undefined;
}

/** The broker operations behind one delivery's two settlements, as an adapter writes them. */
export interface SettlementRecorder {
  ack(): Promise<void>;
  retry(options: RetryOptions): Promise<void>;
}

/** The settlement a delivery was given. */
export type SettlementOutcome =
  | { readonly kind: 'ack' }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly error?: ErrorInfo | undefined };

/**
 * A delivery's settle methods with the contract's idempotency built in, plus what was chosen.
 * The first of `ack` or `retry` wins; later calls record nothing and resolve once
 * the first is recorded. A settlement whose recording rejected does not count: `outcome` goes
 * back to `undefined` and the next call tries again (its caller saw the rejection).
 */
export interface DeliverySettlement extends SettlementRecorder {
  /** The settlement chosen so far (set synchronously by the first call), or undefined. */
  readonly outcome: SettlementOutcome | undefined;
  /** The chosen settlement's recording, or undefined before one was chosen. */
  readonly recorded: Promise<void> | undefined;
}

const noop = () => {};

/**
 * What a `SettlementRecorder`'s `ack` or `retry` returns when it recorded the settlement before
 * returning (Kafka's ack: an offset marked in the consumer's memory). The kit then counts the
 * settlement as recorded at once, and the worker does not wait on it: no callbacks and no await
 * per delivery. Any other promise is waited for as before.
 */
export const SETTLED: Promise<void> = Promise.resolve();

const ACK: SettlementOutcome = Object.freeze({ kind: 'ack' });

interface SettlementState {
  readonly recorder: SettlementRecorder;
  outcome: SettlementOutcome | undefined;
  recorded: Promise<void> | undefined;
  /** True once `recorded` has resolved: a caller may then read the outcome without awaiting it. */
  confirmed: boolean;
}

/**
 * A settlement's state with its two settle methods: one object and two closures per delivery.
 * `runDelivery` uses it as it is; `createSettlement` hands out a read-only view of one. The
 * methods are own arrow functions: they do not need `this`.
 */
export class SettlementCell implements SettlementState {
  readonly recorder: SettlementRecorder;
  outcome: SettlementOutcome | undefined = undefined;
  recorded: Promise<void> | undefined = undefined;
  confirmed = false;
  readonly ack: () => Promise<void>;
  readonly retry: (options: RetryOptions) => Promise<void>;

  constructor(recorder: SettlementRecorder) {
    this.recorder = recorder;
    // Assigned here, not as field initialisers: a transpiler keeping names (tsx, esbuild's
    // keepNames) would otherwise redefine each closure's `name` on every delivery.
    this.ack = () => settle(this, ACK, undefined);
    this.retry = (options) => {
      const { delayMs, error } = options;
      return settle(this, { kind: 'retry', delayMs, error }, options);
    };
  }
}

/** The first call chooses and records; later calls wait for that recording. */
function settle(
  state: SettlementState,
  chosen: SettlementOutcome,
  options: RetryOptions | undefined,
): Promise<void> {
  if (state.recorded !== undefined) return state.recorded.then(noop, noop);
  state.outcome = chosen;
  let attempt: Promise<void>;
  try {
    attempt = options === undefined ? state.recorder.ack() : state.recorder.retry(options);
  } catch (error) {
    attempt = Promise.reject(error);
  }
  state.recorded = attempt;
  if (attempt === SETTLED) {
    state.confirmed = true;
    return attempt;
  }
  attempt.then(
    () => {
      if (state.recorded === attempt) state.confirmed = true;
    },
    () => {
      if (state.recorded !== attempt) return;
      state.outcome = undefined;
      state.recorded = undefined;
    },
  );
  return attempt;
}

/**
 * Wraps an adapter's broker operations so that settling is idempotent: first settlement wins.
 * Safe under interleaved async calls: the choice is made synchronously. The methods do not use
 * `this`: pass them around unbound.
 *
 * @example
 * const settlement = createSettlement({
 *   ack: () => channel.ack(msg),
 *   retry: ({ delayMs }) => republishDelayed(msg, delayMs),
 * });
 */
export function createSettlement(recorder: SettlementRecorder): DeliverySettlement {
  const cell = new SettlementCell(recorder);
  // A read-only view of the cell `runDelivery` uses: the same settle methods, no second copy
  return {
    get outcome() {
      return cell.outcome;
    },
    get recorded() {
      return cell.recorded;
    },
    ack: cell.ack,
    retry: cell.retry,
  };
}
