/** What a call that declares no `signal` parameter is given: a signal that never aborts. */
const UNUSED_SIGNAL: AbortSignal = new AbortController().signal;

/**
 * Deadlines of one length for many calls. Each `run` rejects with `timeoutError()` once `ms`
 * passed without the call settling (its `signal` aborts just after); the call itself is not
 * undone. Because every deadline has the same length, they fall due in the order the calls
 * started: one timer, armed for the oldest call still pending, serves them all, instead of a timer
 * set and cleared per call. No timer is left once no call is pending. A call that declares no
 * parameter (`call.length === 0`) is given a shared signal that never aborts: an `AbortController`
 * costs microseconds per call, and clients without abort support would not listen to it anyway.
 * Safe for concurrent calls.
 */
export interface DeadlineQueue {
  run<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

interface Pending {
  /** `performance.now()` at which it falls due. */
  readonly dueAt: number;
  /** Rejects the call with the timeout; undefined once the call settled or timed out. */
  expire: (() => void) | undefined;
}

/**
 * @example
 * const deadlines = createDeadlineQueue(500, () => new TransportUnavailableError('no answer within 500 ms'));
 * await deadlines.run((signal) => client.send(command, { abortSignal: signal }));
 */
export function createDeadlineQueue(ms: number, timeoutError: () => Error): DeadlineQueue {
  /** Calls in the order they started (so also in the order they fall due); `head` is the oldest kept. */
  let pending: Pending[] = [];
  let head = 0;
  let timer: NodeJS.Timeout | undefined;

  /** Drops settled calls from the front; clears the timer once none is pending. */
  const trim = () => {
    while (head < pending.length && pending[head]?.expire === undefined) head++;
    if (head < pending.length) {
      // Under steady load some call is always pending: drop the front now and then.
      if (head >= 1024 && head * 2 >= pending.length) {
        pending = pending.slice(head);
        head = 0;
      }
      return;
    }
    pending = [];
    head = 0;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const arm = () => {
    const oldest = pending[head];
    if (timer !== undefined || oldest === undefined) return;
    timer = setTimeout(expireDue, Math.max(1, Math.ceil(oldest.dueAt - performance.now())));
  };

  const expireDue = () => {
    timer = undefined;
    const now = performance.now();
    for (let p = pending[head]; p !== undefined && p.dueAt <= now; p = pending[++head]) {
      const expire = p.expire;
      p.expire = undefined;
      expire?.();
    }
    trim();
    arm();
  };

  return {
    run<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
      const controller = call.length > 0 ? new AbortController() : undefined;
      return new Promise<T>((resolve, reject) => {
        const entry: Pending = {
          dueAt: performance.now() + ms,
          expire: () => {
            const err = timeoutError();
            reject(err);
            // After the caller's answer is on its way: a client's abort can be slow (sockets, retries).
            if (controller) setImmediate(() => controller.abort(err));
          },
        };
        pending.push(entry);
        arm();
        /** True when the call settled before its deadline (the answer is then the call's own). */
        const inTime = (): boolean => {
          if (entry.expire === undefined) return false;
          entry.expire = undefined;
          trim();
          return true;
        };
        let answer: Promise<T>;
        try {
          answer = call(controller?.signal ?? UNUSED_SIGNAL);
        } catch (err) {
          answer = Promise.reject(err);
        }
        answer.then(
          (value) => {
            if (inTime()) resolve(value);
          },
          (err: unknown) => {
            if (inTime()) reject(err);
          },
        );
      });
    },
  };
}
