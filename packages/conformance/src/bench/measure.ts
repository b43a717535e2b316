/** One timed run: how many operations, how long, and the rate. */
export interface Measured {
  readonly label: string;
  readonly count: number;
  readonly ms: number;
  readonly perSecond: number;
}

/** Times `run` (which performs `count` operations) and returns the rate. */
export async function measure(
  label: string,
  count: number,
  run: () => Promise<void>,
): Promise<Measured> {
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  return { label, count, ms, perSecond: (count / ms) * 1000 };
}

/**
 * Runs each contender `rounds` times, interleaved (a, b, a, b, …) so load from elsewhere on the
 * machine hits both alike, and returns the median round of each, in the contenders' order.
 */
export async function interleaved(
  rounds: number,
  contenders: readonly (() => Promise<Measured>)[],
): Promise<Measured[]> {
  const results: Measured[][] = contenders.map(() => []);
  for (let r = 0; r < rounds; r++)
    for (const [i, run] of contenders.entries()) results[i]?.push(await run());
  return results.map((runs) => {
    const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
    const median = sorted[Math.floor(sorted.length / 2)];
    if (!median) throw new Error('interleaved: rounds must be at least 1');
    return median;
  });
}
