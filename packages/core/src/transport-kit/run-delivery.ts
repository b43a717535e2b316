import type { Delivery, RenewableDelivery } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { errorInfo } from '../errors.js';
import { SettlementCell, type SettlementOutcome, type SettlementRecorder } from './settlement.js';

/**
 * What an adapter knows about one received message: the envelope and its broker operations.
 * `renewLock`, where the broker can renew a lock, renews it for the transport's `lock.ms`; the
 * delivery handed to the handler is then a `RenewableDelivery`.
 */
export interface DeliveryInit extends SettlementRecorder {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly renewLock?: (() => Promise<void>) | undefined;
}

export interface RunDeliveryOptions {
  /** Called when no settlement could be recorded (the message returns when its lock is lost). */
  readonly onError?: ((error: unknown) => void) | undefined;
}

/**
 * Runs `handler` on one delivery built from `init` and enforces the delivery contract:
 * settling is idempotent (first settlement wins); a handler that throws, or returns without
 * settling, is retried at once (`retry({ delayMs: 0 })`, with the thrown error); when recording
 * the settlement fails, `retry({ delayMs: 0 })` is tried once more. Never rejects.
 *
 * Resolves once the handler has returned and its settlement is recorded, with that settlement,
 * or `undefined` when none could be recorded (the error went to `onError`).
 *
 * @example
 * const outcome = await runDelivery(handler, {
 *   envelope, attempt, signal: lock.signal, ack, retry, renewLock,
 * });
 */
export async function runDelivery(
  handler: (delivery: Delivery) => Promise<void>,
  init: DeliveryInit,
  options: RunDeliveryOptions = {},
): Promise<SettlementOutcome | undefined> {
  const settlement = new SettlementCell(init);
  const { envelope, attempt, signal, renewLock } = init;
  const { ack, retry } = settlement;
  const delivery: Delivery | RenewableDelivery =
    renewLock === undefined
      ? { envelope, attempt, signal, ack, retry }
      : { envelope, attempt, signal, ack, retry, renewLock: () => renewLock.call(init) };
  let failure: { error: unknown } | undefined;
  try {
    await handler(delivery);
  } catch (error) {
    failure = { error };
  }
  // What was `finish`, inline: one async call per delivery fewer.
  const chosen = settlement.outcome;
  if (settlement.recorded) {
    try {
      await settlement.recorded;
      return chosen;
    } catch {
      // not recorded: fall through to the one fallback retry
    }
  }
  const pending =
    settlement.recorded ??
    settlement.retry({
      delayMs: 0,
      error: failure === undefined ? undefined : errorInfo(failure.error),
    });
  const outcome = settlement.outcome;
  try {
    await pending;
    return outcome;
  } catch (error) {
    options.onError?.(error);
    return undefined;
  }
}
