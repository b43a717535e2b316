/** A deadline passed while waiting for something the contract promises. */
export class ConformanceTimeoutError extends Error {
  override name = 'ConformanceTimeoutError';
}

/**
 * Polls `probe` until it returns something other than `undefined` or `false`, and resolves with
 * it; rejects with `ConformanceTimeoutError` (carrying `message`) after `timeoutMs`.
 *
 * @example
 * await waitUntil(async () => (await transport.deadLetters.count()) === 1 || undefined, { timeoutMs: 5000, message: 'one dead letter' });
 */
export async function waitUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: {
    readonly timeoutMs: number;
    readonly intervalMs?: number;
    readonly message: string | (() => string);
  },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) {
      const text = typeof options.message === 'string' ? options.message : options.message();
      throw new ConformanceTimeoutError(`not within ${options.timeoutMs} ms: ${text}`);
    }
    await sleep(options.intervalMs ?? 10);
  }
}

/** Runs the suite makes of a check that a machine stall left unjudged, before it gives up. */
const TRIES = 5;

/**
 * Runs `steps` until one run finishes within `leaseMs` of its start, and resolves with that run's
 * result. A scenario whose assertions need a short lease still alive runs its calls here, so a
 * stall of the machine (a disk sync, a GC pause) that ran the lease out is tried again instead of
 * judged: a run that finished within the lease proves the lease was alive at each of its calls.
 * Rejects with `ConformanceTimeoutError`, naming the setting to `raise`, when every run stalled.
 *
 * @example
 * const { env, again } = await beforeLeaseEnds(200, async () => { ... });
 */
export async function beforeLeaseEnds<T>(
  leaseMs: number,
  steps: () => Promise<T>,
  raise = 'shortLeaseMs',
): Promise<T> {
  for (let i = 0; i < TRIES; i++) {
    const started = Date.now();
    const result = await steps();
    if (Date.now() - started < leaseMs) return result;
  }
  throw new ConformanceTimeoutError(
    `each of ${TRIES} runs took longer than the ${leaseMs} ms lease it needed alive: raise ${raise}`,
  );
}

/**
 * Runs `run` until one run can be judged, and resolves with what it saw. A run whose assertions
 * need a short lock held at calls spread over more than the lock (renewals, a handler's first
 * read of its signal) answers `undefined` when one of them came too late to prove it (a machine
 * stall may rightly have let the lock go), and is run again on a fresh queue. Rejects with
 * `ConformanceTimeoutError` (saying `why`) when every run answered `undefined`.
 *
 * @example
 * const seen = await untilJudged(() => oneRun(ctx), 'a renewal came too late to prove the lock held');
 */
export async function untilJudged<T>(run: () => Promise<T | undefined>, why: string): Promise<T> {
  for (let i = 0; i < TRIES; i++) {
    const seen = await run();
    if (seen !== undefined) return seen;
  }
  throw new ConformanceTimeoutError(`in each of ${TRIES} runs ${why}`);
}

/**
 * How long after a delivery (or a renewal asked) the suite counts a lock of `lockMs` surely held:
 * a transport may count its lock lost a little early (SQS keeps a tenth for whole-second
 * rounding and clock skew), so a call later than this proves nothing about the lock.
 */
export const surelyHeldMs = (lockMs: number): number => lockMs * 0.75;

/**
 * Waits a fixed time. The suite uses it only to show that something does *not* happen (no early
 * retry, no redelivery while a lock is held), never to wait for something that should.
 */
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** A promise a test opens by hand: hung handlers wait on one. Opening twice is harmless. */
export interface Gate {
  readonly opened: Promise<void>;
  readonly isOpen: boolean;
  open(): void;
}

/**
 * @example
 * const gate = createGate(); // handler: await gate.opened;  test: gate.open();
 */
export function createGate(): Gate {
  let open!: () => void;
  let isOpen = false;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    opened,
    get isOpen() {
      return isOpen;
    },
    open() {
      isOpen = true;
      open();
    },
  };
}

/** Races `promise` against a deadline; rejects with `ConformanceTimeoutError` naming `what`. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ConformanceTimeoutError(`not within ${timeoutMs} ms: ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
