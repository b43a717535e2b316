import { LockLostError } from '@onceflow/core';

/**
 * One delivery's view of its BullMQ lock. `signal` aborts (with `LockLostError`) when the lock is
 * known lost: its expiry passed without an extension (the stalled check may hand the job to
 * another consumer from then on), or a settlement or extension found the lock gone. `dispose`
 * stops the expiry timer once the delivery is settled.
 */
export interface LockWatch {
  readonly signal: AbortSignal;
  /** The lock now runs until `until` (ms epoch). */
  renew(until: number): void;
  lost(reason: string): void;
  dispose(): void;
}

export function watchLock(lockedUntil: number, describe: string): LockWatch {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;

  const dispose = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const lost = (reason: string) => {
    dispose();
    if (!controller.signal.aborted) {
      controller.abort(new LockLostError(`lock on ${describe} lost: ${reason}`));
    }
  };
  const renew = (until: number) => {
    if (controller.signal.aborted) return;
    dispose();
    timer = setTimeout(() => lost('expired'), Math.max(0, until - Date.now()));
    timer.unref();
  };

  renew(lockedUntil);
  return { signal: controller.signal, renew, lost, dispose };
}
