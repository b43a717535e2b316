import { LockLostError } from '../errors.js';

/**
 * One delivery's view of its broker lock (lease, job lock, visibility timeout). It is lost once
 * its expiry (less `marginMs`) passed without a renewal, or a settlement or extension found it
 * gone (`lost`): `isLost()` turns true and `signal` aborts with `LockLostError`. Adapters refuse
 * late settlements with `assertHeld` where the broker would accept them. `dispose` stops the
 * timer once settled.
 *
 * `signal` is made on first read (an `AbortController` costs more than the rest of a delivery's
 * bookkeeping), already aborted if the lock is lost by then: hand the watch's `isLost` to the
 * kit's `DeliveryInit.lockLost` and read `signal` only where it is needed.
 */
export interface LockWatch {
  readonly signal: AbortSignal;
  /** True once the lock is known lost (the same moment `signal` aborts). Cheap: no signal made. */
  isLost(): boolean;
  /** Calls `listener` once when the lock is lost (at once if it is already): no signal made. */
  onLost(listener: () => void): void;
  /** The lock now runs until `until` (ms epoch). Ignored once lost. */
  renew(until: number): void;
  /** Marks the lock lost (first reason wins) and aborts `signal`. */
  lost(reason: string): void;
  /** Throws `LockLostError` naming `op` when the lock is lost or its deadline has passed. */
  assertHeld(op: string): void;
  dispose(): void;
}

export interface LockWatchOptions {
  /** When the lock runs out (ms epoch). */
  readonly until: number;
  /** What the lock is on, for the error message, e.g. `lease on orders/evt_1`. */
  readonly describe: string;
  /** Count the lock lost this long before `until` (clock skew, rounding). Default 0. */
  readonly marginMs?: number;
  /** Why an expiry is lost. Default `expired`. */
  readonly expiredReason?: string;
}

/**
 * @example
 * const lock = watchLock({ until: receivedAt + lockMs, describe: `lock on ${queue}/${id}` });
 * // extendLock: lock.renew(Date.now() + ms) · settle: lock.assertHeld('ack'); …; lock.dispose()
 */
export function watchLock(options: LockWatchOptions): LockWatch {
  return new WatchedLock(options);
}

/**
 * One instance per delivery, its methods on the prototype: no closures made per delivery. The
 * methods use `this`; every caller calls them on the watch.
 */
class WatchedLock implements LockWatch {
  /** Made on first read of `signal`. */
  #controller: AbortController | undefined;
  /** Set once lost; the controller, if made, is aborted with it. */
  #reason: LockLostError | undefined;
  #listeners: (() => void)[] | undefined;
  readonly #describe: string;
  readonly #marginMs: number;
  readonly #expiredReason: string;
  #deadline: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LockWatchOptions) {
    this.#describe = options.describe;
    this.#marginMs = options.marginMs ?? 0;
    this.#expiredReason = options.expiredReason ?? 'expired';
    this.#deadline = options.until;
    this.#arm();
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  isLost(): boolean {
    return this.#reason !== undefined;
  }

  onLost(listener: () => void): void {
    if (this.#reason !== undefined) {
      listener();
      return;
    }
    this.#listeners ??= [];
    this.#listeners.push(listener);
  }

  renew(until: number): void {
    if (this.#reason !== undefined) return;
    this.dispose();
    this.#deadline = until;
    this.#arm();
  }

  lost(reason: string): void {
    this.dispose();
    if (this.#reason !== undefined) return;
    this.#reason = new LockLostError(`${this.#describe} lost: ${reason}`);
    this.#controller?.abort(this.#reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  assertHeld(op: string): void {
    if (Date.now() >= this.#deadline - this.#marginMs) this.lost(this.#expiredReason);
    if (this.#reason !== undefined) {
      throw new LockLostError(`${op} refused: ${this.#reason.message}`);
    }
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The timer's callback: lost once the deadline (less the margin) passed, else set again. */
  expire(): void {
    this.#timer = undefined;
    if (Date.now() >= this.#deadline - this.#marginMs) this.lost(this.#expiredReason);
    else this.#arm();
  }

  /** Times the expiry; a long wait first sleeps to a whole second before it (see `coarse`). */
  #arm(): void {
    this.#timer = setTimeout(
      expireWatch,
      coarse(this.#deadline - this.#marginMs - Date.now()),
      this,
    );
    this.#timer.unref();
  }
}

/** One timer callback for every watch (the watch comes as the timer's argument). */
function expireWatch(watch: WatchedLock): void {
  watch.expire();
}

/**
 * A wait of more than two seconds, rounded down to whole seconds: Node keeps one timer list per
 * duration, so a few shared durations are cheaper than one per delivery. The timer then fires a
 * little early and is set again for the rest, never late.
 */
function coarse(ms: number): number {
  if (ms <= 2_000) return Math.max(0, ms);
  return ms - (ms % 1_000);
}
