/**
 * Counts the requests a receiver is answering and, once draining, turns new ones away. Touched
 * from request callbacks on one thread only.
 */
export interface RequestGate {
  /** Requests being answered now. */
  readonly inFlight: number;
  readonly draining: boolean;
  /** Runs `answer` counted as in flight. */
  track<T>(answer: () => Promise<T>): Promise<T>;
  /** Starts draining; resolves once no request is in flight. Idempotent. */
  drain(): Promise<void>;
}

export function createRequestGate(): RequestGate {
  let inFlight = 0;
  let draining = false;
  let waiters: (() => void)[] = [];
  const leave = () => {
    inFlight--;
    if (inFlight > 0 || waiters.length === 0) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };
  return {
    get inFlight() {
      return inFlight;
    },
    get draining() {
      return draining;
    },
    async track(answer) {
      inFlight++;
      try {
        return await answer();
      } finally {
        leave();
      }
    },
    drain() {
      draining = true;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
