import type { Delivery, RenewableDelivery } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { errorInfo } from '../errors.js';
import { SettlementCell, type SettlementOutcome, type SettlementRecorder } from './settlement.js';

/**
 * What an adapter knows about one received message: the envelope and its broker operations.
 * `renewLock`, where the broker can renew a lock, renews it for the transport's `lock.ms`; the
 * delivery handed to the handler is then a `RenewableDelivery`.
 *
 * `signal` is read only when the handler (or the worker, for a handler that reads `ctx.signal`)
 * needs it, never eagerly by `runDelivery`, so an init may make it on first read (a getter, as
 * `LockWatch.signal` does) if it also gives `lockLost`: the delivery's `lockLost()` then answers
 * from it, and a delivery nobody listens to makes no `AbortController`. A signal made after the
 * lock was lost must be aborted already. Methods are called on the init (`this` is the init).
 */
export interface DeliveryInit extends SettlementRecorder {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly signal: AbortSignal;
  /** True once the lock is known lost (the moment `signal` aborts). Without it: `signal.aborted`. */
  lockLost?(): boolean;
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
 *   envelope, attempt, get signal() { return lock.signal }, lockLost: () => lock.isLost(),
 *   ack, retry, renewLock,
 * });
 */
export function runDelivery(
  handler: (delivery: Delivery) => Promise<void>,
  init: DeliveryInit,
  options: RunDeliveryOptions = {},
): Promise<SettlementOutcome | undefined> {
  const settlement = new SettlementCell(init);
  const delivery: Delivery | RenewableDelivery =
    init.renewLock === undefined
      ? new KitDelivery(init, settlement)
      : new RenewableKitDelivery(init, settlement);
  let returned: Promise<void>;
  try {
    returned = handler(delivery);
  } catch (error) {
    return finish(settlement, { error }, options);
  }
  // Not an async function: most handlers (the worker's among them) awaited their settlement, so
  // it is known recorded when they return, and the delivery ends without a frame of its own.
  return Promise.resolve(returned).then(
    () => (settlement.confirmed ? settlement.outcome : finish(settlement, undefined, options)),
    (error: unknown) => finish(settlement, { error }, options),
  );
}

/** The rest of `runDelivery` once the handler returned (`failure`: it threw). */
async function finish(
  settlement: SettlementCell,
  failure: { error: unknown } | undefined,
  options: RunDeliveryOptions,
): Promise<SettlementOutcome | undefined> {
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

/**
 * The delivery handed to the handler: its signal read from the init only when read (an init may
 * make it lazily), the settle methods of its settlement cell. Getters on the prototype: one
 * hidden class for every delivery.
 */
class KitDelivery implements Delivery {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly ack: () => Promise<void>;
  readonly retry: SettlementCell['retry'];
  protected readonly init: DeliveryInit;

  constructor(init: DeliveryInit, settlement: SettlementCell) {
    this.envelope = init.envelope;
    this.attempt = init.attempt;
    this.ack = settlement.ack;
    this.retry = settlement.retry;
    this.init = init;
  }

  get signal(): AbortSignal {
    return this.init.signal;
  }

  lockLost(): boolean {
    const { init } = this;
    return init.lockLost === undefined ? init.signal.aborted : init.lockLost();
  }
}

class RenewableKitDelivery extends KitDelivery implements RenewableDelivery {
  renewLock(): Promise<void> {
    const { init } = this;
    return (init.renewLock as () => Promise<void>).call(init);
  }
}
