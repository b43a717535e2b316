/**
 * Counts a consumer's handler calls in flight, enforces its concurrency limit and lets `close()`
 * wait for them: start a task with `run` only when `hasRoom`, wait with `whenRoom()`, drain with
 * `idle()`. Not shared across processes; one per subscription.
 */
export interface InFlight {
  readonly limit: number;
  readonly size: number;
  readonly hasRoom: boolean;
  /**
   * Starts `task` and tracks it until it settles. Throws `RangeError` when it would exceed the
   * limit. The returned promise is the task's, unchanged.
   */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Resolves when another task may start (at once if one may). */
  whenRoom(): Promise<void>;
  /** Resolves when no task is in flight (at once if none is). */
  idle(): Promise<void>;
}

/**
 * @example
 * const inFlight = createInFlight(options.concurrency);
 * while (!closed) { await inFlight.whenRoom(); const msg = await receive(); void inFlight.run(() => runDelivery(handler, toInit(msg))); }
 * await inFlight.idle(); // in close()
 */
export function createInFlight(limit: number): InFlight {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
  }
  let size = 0;
  let waiters: (() => void)[] = [];

  const wake = () => {
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  /** One function for every task: it reads nothing of the task it ends. */
  const done = () => {
    size--;
    wake();
  };

  return {
    limit,
    get size() {
      return size;
    },
    get hasRoom() {
      return size < limit;
    },
    run(task) {
      if (size >= limit) throw new RangeError(`concurrency limit ${limit} reached`);
      size++;
      let promise: ReturnType<typeof task>;
      try {
        promise = task();
      } catch (err) {
        done();
        throw err;
      }
      promise.then(done, done);
      return promise;
    },
    whenRoom() {
      if (size < limit) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const check = () => (size < limit ? resolve() : waiters.push(check));
        waiters.push(check);
      });
    },
    idle() {
      if (size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const check = () => (size === 0 ? resolve() : waiters.push(check));
        waiters.push(check);
      });
    },
  };
}
