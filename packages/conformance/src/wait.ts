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

/**
 * Runs `steps` until one run finishes within `leaseMs` of its start, and resolves with that run's
 * result. A scenario whose assertions need a short lease still alive runs its calls here, so a
 * stall of the machine (a disk sync, a GC pause) that ran the lease out is tried again instead of
 * judged: a run that finished within the lease proves the lease was alive at each of its calls.
 * Rejects with `ConformanceTimeoutError` when every one of `tries` runs stalled.
 *
 * @example
 * const { env, again } = await beforeLeaseEnds(200, async () => { ... });
 */
export async function beforeLeaseEnds<T>(
  leaseMs: number,
  steps: () => Promise<T>,
  tries = 5,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const started = Date.now();
    const result = await steps();
    if (Date.now() - started < leaseMs) return result;
  }
  throw new ConformanceTimeoutError(
    `each of ${tries} runs took longer than the ${leaseMs} ms lease it needed alive: raise shortLeaseMs`,
  );
}

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
