import { LockLostError } from '../errors.js';

/**
 * One delivery's view of its broker lock (lease, job lock, visibility timeout). `signal` aborts
 * with `LockLostError` once the lock is known lost: its expiry (less `marginMs`) passed without a
 * renewal, or a settlement or extension found it gone (`lost`). Adapters refuse late settlements
 * with `assertHeld` where the broker would accept them. `dispose` stops the timer once settled.
 */
export interface LockWatch {
  readonly signal: AbortSignal;
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
  const { describe, marginMs = 0, expiredReason = 'expired' } = options;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let deadline = options.until;

  const dispose = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const lost = (reason: string) => {
    dispose();
    if (!controller.signal.aborted)
      controller.abort(new LockLostError(`${describe} lost: ${reason}`));
  };
  const renew = (until: number) => {
    if (controller.signal.aborted) return;
    dispose();
    deadline = until;
    timer = setTimeout(() => lost(expiredReason), Math.max(0, until - marginMs - Date.now()));
    timer.unref();
  };

  renew(options.until);
  return {
    signal: controller.signal,
    renew,
    lost,
    assertHeld(op) {
      if (Date.now() >= deadline - marginMs) lost(expiredReason);
      if (controller.signal.aborted) {
        const reason = controller.signal.reason as LockLostError;
        throw new LockLostError(`${op} refused: ${reason.message}`);
      }
    },
    dispose,
  };
}
