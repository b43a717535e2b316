/** Waits before each step so steps start at most `perSecond` a second. */
export type Pacer = () => Promise<void>;

/**
 * A pacer for `--rate`: the n-th call resolves no earlier than `(n - 1) / perSecond` seconds
 * after the first, so a run never goes faster than the rate on average nor bursts after a
 * pause. Without a rate every call resolves at once.
 *
 * @example
 * const pace = createPacer(50);
 * for (const item of items) { await pace(); await act(item); }
 */
export function createPacer(perSecond: number | undefined, now: () => number = Date.now): Pacer {
  if (perSecond === undefined) return async () => {};
  const gapMs = 1000 / perSecond;
  let next: number | undefined;
  return async () => {
    const t = now();
    next = next === undefined ? t : Math.max(next + gapMs, t);
    const wait = next - t;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}
