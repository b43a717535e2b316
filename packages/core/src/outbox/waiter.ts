/** Sleeps that `wakeAll` ends early: the dispatcher's idle and backoff waits, cut short by close. */
export interface Waiter {
  /** Resolves after `ms`, or at the next `wakeAll`. */
  sleep(ms: number): Promise<void>;
  wakeAll(): void;
}

export function createWaiter(): Waiter {
  const sleepers = new Set<() => void>();
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleepers.add(wake);
      }),
    wakeAll() {
      for (const wake of [...sleepers]) wake();
    },
  };
}
