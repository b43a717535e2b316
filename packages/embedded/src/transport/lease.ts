import { LockLostError } from '@onceflow/core';

/**
 * One delivery's view of its lease. `signal` aborts (with `LockLostError`) when the lease is known
 * lost: its expiry passed without an extension (another process may take the message from then
 * on), or a settlement or extension found the token no longer owns the row. `dispose` stops the
 * expiry timer once the delivery is settled.
 */
export interface LeaseWatch {
  readonly signal: AbortSignal;
  /** The lease now runs until `until` (ms epoch). */
  renew(until: number): void;
  lost(reason: string): void;
  dispose(): void;
}

export function watchLease(lockedUntil: number, describe: string): LeaseWatch {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;

  const lost = (reason: string) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!controller.signal.aborted) {
      controller.abort(new LockLostError(`lease on ${describe} lost: ${reason}`));
    }
  };
  const renew = (until: number) => {
    if (controller.signal.aborted) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => lost('expired'), Math.max(0, until - Date.now()));
    timer.unref();
  };

  renew(lockedUntil);
  return {
    signal: controller.signal,
    renew,
    lost,
    dispose() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
