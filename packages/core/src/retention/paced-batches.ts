import { setTimeout as sleep } from 'node:timers/promises';

/** How a store's retention paces its batches (`purgeInPacedBatches`). */
export interface PacedBatchesOptions {
  /** Rows one batch deletes at most: a batch that deletes fewer is the last. */
  readonly batchSize: number;
  /**
   * After each batch, pause for this many times as long as the batch took, so retention spends at
   * most `1 / (1 + pauseRatio)` of its run deleting and leaves the rest to the claims and the
   * database's write-back. 0 runs batches back to back. Slow batches (a busy database) pause longer.
   */
  readonly pauseRatio: number;
  /** Stops between batches: the call resolves with the rows deleted so far. */
  readonly signal?: AbortSignal | undefined;
  /** Milliseconds since some fixed point; for tests. Default `performance.now`. */
  readonly now?: (() => number) | undefined;
  /** Waits; for tests. Default a timer that honours `signal`. */
  readonly pause?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

const timerPause = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
};

/**
 * Runs one batched delete until a batch comes back short or `signal` aborts, pausing between
 * batches in proportion to how long each took; resolves with the rows deleted. A batch that throws
 * rejects the call: the rows of earlier batches stay deleted, and the next run goes on from there.
 */
export async function purgeInPacedBatches(
  deleteBatch: () => Promise<number | null | undefined>,
  options: PacedBatchesOptions,
): Promise<number> {
  const { batchSize, pauseRatio, signal } = options;
  const now = options.now ?? (() => performance.now());
  const pause = options.pause ?? timerPause;
  // A function, not a property read: TypeScript would narrow `aborted` across the awaits.
  const aborted = () => signal?.aborted === true;
  let total = 0;
  while (!aborted()) {
    const started = now();
    const deleted = (await deleteBatch()) ?? 0;
    total += deleted;
    if (deleted < batchSize || aborted()) break;
    const ms = (now() - started) * pauseRatio;
    if (ms > 0) await pause(ms, signal);
  }
  return total;
}
