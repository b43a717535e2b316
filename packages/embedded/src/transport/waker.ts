/**
 * A consumer loop's sleep: `wait(ms)` resolves after `ms` or as soon as `wake()` is called,
 * whichever is first. A `wake()` while nobody waits is remembered, so the next `wait` returns
 * at once and no wake-up is lost between a poll and the sleep after it.
 */
export interface Waker {
  wait(ms: number): Promise<void>;
  wake(): void;
}

export function createWaker(): Waker {
  let pending = false;
  let resolveWait: (() => void) | undefined;
  return {
    wait(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          resolveWait = undefined;
          resolve();
        }
        resolveWait = done;
      });
    },
    wake() {
      if (resolveWait) resolveWait();
      else pending = true;
    },
  };
}

/** In-process publish notices per queue, so consumers need not wait for their next poll. */
export interface QueueNotifier {
  subscribe(queue: string, listener: () => void): () => void;
  notify(queue: string): void;
}

export function createQueueNotifier(): QueueNotifier {
  const listeners = new Map<string, Set<() => void>>();
  return {
    subscribe(queue, listener) {
      let set = listeners.get(queue);
      if (!set) {
        set = new Set();
        listeners.set(queue, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(queue);
      };
    },
    notify(queue) {
      for (const listener of listeners.get(queue) ?? []) listener();
    },
  };
}
