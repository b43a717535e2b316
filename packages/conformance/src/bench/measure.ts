import { GCProfiler, getHeapStatistics } from 'node:v8';

/**
 * One timed run: how many operations, how long, the rate, and (from `measure`) the process's
 * cost meanwhile.
 */
export interface Measured {
  readonly label: string;
  readonly count: number;
  readonly ms: number;
  readonly perSecond: number;
  /** This process's CPU (user + system, `process.cpuUsage`) during the run, in µs. */
  readonly cpuMicros?: number | undefined;
  /** Bytes allocated on the JS heap during the run (heap growth between collections, summed). */
  readonly allocatedBytes?: number | undefined;
}

/**
 * Times `run` (which performs `count` operations) and returns the rate, with the process's CPU
 * and JS-heap allocation over the same window (everything the process did, not only `run`).
 */
export async function measure(
  label: string,
  count: number,
  run: () => Promise<void>,
): Promise<Measured> {
  const gc = new GCProfiler();
  gc.start();
  const heap0 = getHeapStatistics().used_heap_size;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const heap1 = getHeapStatistics().used_heap_size;
  const { statistics } = gc.stop();
  // What each collection found beyond what the one before left, and the growth since the last.
  let allocatedBytes = 0;
  let after = heap0;
  for (const { beforeGC, afterGC } of statistics) {
    allocatedBytes += Math.max(0, beforeGC.heapStatistics.usedHeapSize - after);
    after = afterGC.heapStatistics.usedHeapSize;
  }
  allocatedBytes += Math.max(0, heap1 - after);
  return {
    label,
    count,
    ms,
    perSecond: (count / ms) * 1000,
    cpuMicros: cpu.user + cpu.system,
    allocatedBytes,
  };
}

/**
 * Runs each contender `rounds` times, interleaved (a, b, a, b, …) so load from elsewhere on the
 * machine hits both alike, and returns the median round of each, in the contenders' order, with
 * the median of the rounds' `cpuMicros` and of their `allocatedBytes` (each taken apart).
 */
export async function interleaved(
  rounds: number,
  contenders: readonly (() => Promise<Measured>)[],
): Promise<Measured[]> {
  const results: Measured[][] = contenders.map(() => []);
  for (let r = 0; r < rounds; r++)
    for (const [i, run] of contenders.entries()) results[i]?.push(await run());
  return results.map((runs) => {
    const median = medianOf(runs, (m) => m.perSecond);
    return {
      ...median,
      cpuMicros: medianOf(runs, (m) => m.cpuMicros ?? 0).cpuMicros,
      allocatedBytes: medianOf(runs, (m) => m.allocatedBytes ?? 0).allocatedBytes,
    };
  });
}

function medianOf(runs: readonly Measured[], by: (m: Measured) => number): Measured {
  const median = [...runs].sort((a, b) => by(a) - by(b))[Math.floor(runs.length / 2)];
  if (!median) throw new Error('interleaved: rounds must be at least 1');
  return median;
}
