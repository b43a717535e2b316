/**
 * How failed deliveries are spaced out: exponential backoff with "full jitter"
 * (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/), which spreads
 * the retries of many failing events evenly instead of letting them hit a recovering dependency
 * in waves.
 */
export interface RetryPolicy {
  /** Deliveries an event gets before it is dead-lettered as `attempts exhausted`. */
  readonly maxAttempts: number;
  /** Ceiling of the first retry's delay, in ms; the ceiling doubles with every attempt. */
  readonly baseDelayMs: number;
  /** No retry is ever scheduled further out than this, in ms. */
  readonly maxDelayMs: number;
  /** `full`: a uniform delay in [0, ceiling]; `none`: exactly the ceiling. */
  readonly jitter: 'full' | 'none';
}

/** The largest delay a retry after `attempt` may get: `min(maxDelayMs, baseDelayMs · 2^(attempt-1))`. */
export function backoffCeiling(attempt: number, policy: RetryPolicy): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 1024));
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
}

/**
 * The delay before retrying a delivery whose `attempt` failed. Pure: the same inputs (and the same
 * `random`, a function returning [0, 1) like `Math.random`) give the same delay. The result is a
 * whole number of ms in [0, backoffCeiling(attempt)].
 *
 * @example
 * backoffDelay(3, { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 300_000, jitter: 'full' }); // 0…4000
 */
export function backoffDelay(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeiling(attempt, policy);
  if (policy.jitter === 'none') return Math.round(ceiling);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(r * ceiling);
}
