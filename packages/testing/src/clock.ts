/**
 * The simulation's clock: virtual time in epoch ms that moves only when the simulation moves it.
 * Nothing in the kit reads the real clock or sets a real timer, so a simulated week takes as long
 * as its steps take to compute, and the same inputs give the same times.
 */
export interface VirtualClock {
  /** Virtual epoch ms: `startAt` plus the elapsed virtual time. */
  now(): number;
  /** Virtual ms since the simulation started. */
  elapsed(): number;
  /** Moves the clock forward to `epochMs`; never backwards (an earlier time is ignored). */
  advanceTo(epochMs: number): void;
}

/** The default start of simulated time: 2026-01-01T00:00:00Z, so timestamps read the same in every run. */
export const DEFAULT_START_AT = Date.UTC(2026, 0, 1);

export function createVirtualClock(startAt: number = DEFAULT_START_AT): VirtualClock {
  let t = startAt;
  return {
    now: () => t,
    elapsed: () => t - startAt,
    advanceTo(epochMs) {
      if (epochMs > t) t = epochMs;
    },
  };
}
