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

  const expire = () => {
    timer = undefined;
    if (Date.now() >= deadline - marginMs) watch.lost(expiredReason);
    else arm();
  };
  /** Times the expiry; a long wait first sleeps to a whole second before it (see `coarse`). */
  const arm = () => {
    timer = setTimeout(expire, coarse(deadline - marginMs - Date.now()));
    timer.unref();
  };
  // Methods that do not use `this`: they may be passed around unbound.
  const watch: LockWatch = {
    signal: controller.signal,
    renew(until) {
      if (controller.signal.aborted) return;
      watch.dispose();
      deadline = until;
      arm();
    },
    lost(reason) {
      watch.dispose();
      if (!controller.signal.aborted)
        controller.abort(new LockLostError(`${describe} lost: ${reason}`));
    },
    assertHeld(op) {
      if (Date.now() >= deadline - marginMs) watch.lost(expiredReason);
      if (controller.signal.aborted) {
        const reason = controller.signal.reason as LockLostError;
        throw new LockLostError(`${op} refused: ${reason.message}`);
      }
    },
    dispose() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
  arm();
  return watch;
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
