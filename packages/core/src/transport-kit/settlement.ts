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
 * Wraps an adapter's broker operations so that settling is idempotent: first settlement wins.
 * Safe under interleaved async calls: the choice is made synchronously.
 *
 * @example
 * const settlement = createSettlement({
 *   ack: () => channel.ack(msg),
 *   retry: ({ delayMs }) => republishDelayed(msg, delayMs),
 * });
 */
export function createSettlement(recorder: SettlementRecorder): DeliverySettlement {
  let outcome: SettlementOutcome | undefined;
  let recorded: Promise<void> | undefined;

  // The first call chooses and records; later calls wait for that recording.
  const recordFirst = (chosen: SettlementOutcome, record: () => Promise<void>): Promise<void> => {
    if (recorded !== undefined) return recorded.then(noop, noop);
    outcome = chosen;
    const attempt = Promise.resolve().then(record);
    recorded = attempt;
    attempt.catch(() => {
      if (recorded !== attempt) return;
      outcome = undefined;
      recorded = undefined;
    });
    return attempt;
  };

  return {
    get outcome() {
      return outcome;
    },
    get recorded() {
      return recorded;
    },
    ack: () => recordFirst({ kind: 'ack' }, () => recorder.ack()),
    retry: (options) =>
      recordFirst({ kind: 'retry', delayMs: options.delayMs, error: options.error }, () =>
        recorder.retry(options),
      ),
  };
}
