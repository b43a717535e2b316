/** Natural batching: how many callers share a statement, and how many statements run at once. */
export interface BatchLimits {
  /** Most callers sent together in one statement. */
  readonly maxBatch: number;
  /** Most statements in flight at once; callers beyond them wait for the next free one. */
  readonly maxInFlight: number;
}

export interface BatcherOptions<I, O> extends BatchLimits {
  /**
   * Runs one statement for `items`; resolves with one answer per item, in order. An answer may
   * be a promise (that item's own follow-up work): its caller settles with it, and the slot is
   * free again as soon as `run` resolved.
   */
  readonly run: (items: readonly I[]) => Promise<readonly (O | PromiseLike<O>)[]>;
  /** Turns a failed batch into each caller's own error (called once per caller). */
  readonly failure: (cause: unknown) => Error;
}

export interface Batcher<I, O> {
  submit(item: I): Promise<O>;
}

interface Waiter<I, O> {
  readonly item: I;
  resolve(answer: O | PromiseLike<O>): void;
  reject(err: Error): void;
}

/**
 * Group commit in the application: while `maxInFlight` statements are running, callers queue,
 * and the next free slot sends up to `maxBatch` of them as one statement. A caller that finds a
 * free slot is sent at once (after the current microtask turn, so callers of one tick share a
 * statement): no timer, no added latency when idle.
 *
 * Each caller gets its own answer or, if the statement fails, its own error from `failure`. The
 * queue is unbounded (as a pool's is): the caller's own concurrency bounds it. Nothing to close:
 * every queued caller is sent as slots free up.
 */
export function createBatcher<I, O>(options: BatcherOptions<I, O>): Batcher<I, O> {
  const { maxBatch, maxInFlight, run, failure } = options;
  let queue: Waiter<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const send = async (batch: readonly Waiter<I, O>[]): Promise<void> => {
    let answers: readonly (O | PromiseLike<O>)[];
    try {
      answers = await run(batch.map((w) => w.item));
      if (answers.length !== batch.length) {
        throw new Error(`batch answered ${answers.length} of ${batch.length} callers`);
      }
    } catch (err) {
      for (const w of batch) w.reject(failure(err));
      return;
    } finally {
      inFlight -= 1;
      dispatch();
    }
    for (const [i, w] of batch.entries()) w.resolve(answers[i] as O | PromiseLike<O>);
  };

  const dispatch = (): void => {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      inFlight += 1;
      void send(batch);
    }
  };

  return {
    submit(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!scheduled && inFlight < maxInFlight) {
          scheduled = true;
          queueMicrotask(dispatch);
        }
      });
    },
  };
}
