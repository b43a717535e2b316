import { backoffDelay, type RetryPolicy } from '../worker/retry-policy.js';

export interface BackoffOptions {
  /** Ceiling of the first delay, in ms; the ceiling doubles with every failure. */
  readonly baseDelayMs: number;
  /** No delay is ever longer than this, in ms. */
  readonly maxDelayMs: number;
  /** A function returning [0, 1), like `Math.random` (the default); for deterministic tests. */
  readonly random?: () => number;
}

/**
 * The waits between tries of one failing thing (a reconnect, a receive loop, a re-send): core's
 * `backoffDelay` with full jitter, so that many clients coming back after a broker restart spread
 * out instead of arriving in waves. Not shared across loops; one per thing retried.
 */
export interface Backoff {
  /** The delay before the next try, in [0, min(maxDelayMs, baseDelayMs · 2^failures)]. */
  next(): number;
  /** After a success: the next delay's ceiling is `baseDelayMs` again. */
  reset(): void;
}

/**
 * @example
 * const backoff = createBackoff({ baseDelayMs: 100, maxDelayMs: 5_000 });
 * // on failure: setTimeout(reconnect, backoff.next());   on success: backoff.reset();
 */
export function createBackoff(options: BackoffOptions): Backoff {
  const policy: RetryPolicy = {
    maxAttempts: Number.POSITIVE_INFINITY,
    baseDelayMs: options.baseDelayMs,
    maxDelayMs: options.maxDelayMs,
    jitter: 'full',
  };
  let failures = 0;
  return {
    next: () => backoffDelay(++failures, policy, options.random),
    reset: () => {
      failures = 0;
    },
  };
}
