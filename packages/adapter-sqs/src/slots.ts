/**
 * A counting semaphore for a consumer's receive loops: each received message holds one slot
 * from the receive request until its delivery is settled, so several loops polling at once never
 * hold more messages than `concurrency`. Single process; not shared across consumers.
 */
export interface Slots {
  /**
   * Waits until a slot is free, then up to `gatherMs` more for `want` to be free, and takes up to
   * `want` of those free. Returns 0 once closed.
   */
  acquire(want: number, gatherMs: number): Promise<number>;
  release(n: number): void;
  /** Wakes every waiter with 0; later `acquire` calls return 0 at once. */
  close(): void;
}

export function createSlots(total: number): Slots {
  let free = total;
  let closed = false;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  const changed = (ms?: number) =>
    new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return {
    async acquire(want, gatherMs) {
      const enough = Math.min(want, total);
      while (!closed && free === 0) await changed();
      const until = Date.now() + gatherMs;
      while (!closed && free < enough && Date.now() < until) await changed(until - Date.now());
      if (closed || free === 0) return closed ? 0 : this.acquire(want, gatherMs);
      const n = Math.min(want, free);
      free -= n;
      return n;
    },
    release(n) {
      if (n <= 0) return;
      free += n;
      wake();
    },
    close() {
      closed = true;
      wake();
    },
  };
}
