import { LockLostError } from '@onceflow/core';

/**
 * One delivery's view of its visibility timeout, kept on this side because SQS does not refuse
 * every late settlement (AWS accepts a delete with an outdated receipt handle). The lock counts
 * as lost `marginMs` before the deadline this process computed (from the receive response's
 * arrival, or from before an extension request was sent; the visibility SQS grants is rounded up
 * to whole seconds besides): from then on `signal` is aborted with `LockLostError` and
 * settlements are refused instead of sent.
 */
export interface VisibilityWatch {
  readonly signal: AbortSignal;
  /** Throws the `LockLostError` if the lock is lost. */
  assertHeld(op: string): void;
  /** The visibility now runs until `until` (ms epoch). */
  renew(until: number): void;
  lost(reason: string): void;
  dispose(): void;
}

/**
 * @example
 * const watch = watchVisibility(sentAt + lockMs, 'orders/evt_1', Math.min(1000, lockMs / 10));
 */
export function watchVisibility(
  until: number,
  describe: string,
  marginMs: number,
): VisibilityWatch {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let deadline = until;

  const clear = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const lost = (reason: string) => {
    clear();
    if (!controller.signal.aborted)
      controller.abort(new LockLostError(`visibility of ${describe} lost: ${reason}`));
  };
  const renew = (next: number) => {
    if (controller.signal.aborted) return;
    clear();
    deadline = next;
    timer = setTimeout(
      () => lost('the visibility timeout ran out'),
      Math.max(0, next - marginMs - Date.now()),
    );
    timer.unref();
  };

  renew(until);
  return {
    signal: controller.signal,
    assertHeld(op) {
      if (Date.now() >= deadline - marginMs) lost('the visibility timeout ran out');
      if (controller.signal.aborted) {
        const reason = controller.signal.reason as LockLostError;
        throw new LockLostError(`${op} refused: ${reason.message}`);
      }
    },
    renew,
    lost,
    dispose: clear,
  };
}
