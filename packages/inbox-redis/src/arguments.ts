/** Argument checks shared by the store's methods; they throw `RangeError` like the other stores. */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be > 0, got ${value}`);
  }
  return Math.ceil(value);
}

export function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be >= 0, got ${value}`);
  }
  return value;
}

/** The envelope's receivedAt in epoch ms, or now when it does not parse. */
export function receivedAtMs(receivedAt: string): number {
  const at = Date.parse(receivedAt);
  return Number.isNaN(at) ? Date.now() : at;
}
