/** Rejects a lease that is not a positive, finite number of milliseconds (RangeError). */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be > 0, got ${value}`);
  return value;
}

/** Rejects a negative or non-finite count or age (RangeError). */
export function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be >= 0, got ${value}`);
  return value;
}
