/**
 * Checks of a store's or transport's call arguments, shared so that every implementation refuses
 * the same values with the same `RangeError` (a call outside the contract, not a store failure).
 */

/**
 * Returns `value` when it is a positive, finite number of milliseconds; throws `RangeError` naming
 * the argument otherwise.
 *
 * @example
 * const lease = positiveMs('leaseMs', options.leaseMs);
 */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be > 0, got ${value}`);
  return value;
}

/**
 * Returns `value` when it is a finite number not below zero (a count, an age); throws
 * `RangeError` naming the argument otherwise.
 *
 * @example
 * const max = Math.floor(nonNegative('limit', options.limit));
 */
export function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be >= 0, got ${value}`);
  return value;
}

/**
 * Returns `delayMs` when it is a `retry({ delayMs })` the transport can keep: within
 * 0..`maxDelayMs`, its declared `capabilities.maxDelayMs`. Throws `RangeError` otherwise.
 *
 * @example
 * async retry({ delayMs }) { await requeue(msg, checkRetryDelay(delayMs, MAX_DELAY_MS)); }
 */
export function checkRetryDelay(delayMs: number, maxDelayMs: number): number {
  if (!(delayMs >= 0 && delayMs <= maxDelayMs))
    throw new RangeError(`retry delayMs must be within 0..${maxDelayMs}, got ${delayMs}`);
  return delayMs;
}
