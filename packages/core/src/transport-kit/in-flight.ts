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
  // One promise per wait, shared by every waiter (not one per call): resolved when a task ends.
  let room: Waiting | undefined;
  let empty: Waiting | undefined;

  /** One function for every task: it reads nothing of the task it ends. */
  const done = () => {
    size--;
    const woken = room;
    room = undefined;
    woken?.resolve();
    if (size === 0 && empty !== undefined) {
      const drained = empty;
      empty = undefined;
      drained.resolve();
    }
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
      room ??= waiting();
      return room.promise;
    },
    idle() {
      if (size === 0) return Promise.resolve();
      empty ??= waiting();
      return empty.promise;
    },
  };
}

interface Waiting {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

function waiting(): Waiting {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
