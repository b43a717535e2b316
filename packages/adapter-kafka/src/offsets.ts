import { TransportUnavailableError } from '@onceflow/core';

/**
 * The committed position of one partition while a batch is handled. Records settle in any order
 * and a settlement is recorded here, in memory, at once (`settle`); `commit()` moves the group
 * offset past the contiguous prefix of settled records, one commit at a time (settlements made
 * meanwhile go into the next one). The offset therefore only ever covers settled records; what
 * was settled but not yet committed when the process dies is redelivered. Not shared across
 * partitions; touched from one event loop only.
 */
export interface PartitionOffsets {
  /** Registers a record about to be handled; call in offset order. */
  track(offset: number): void;
  /**
   * Throws when a settlement of `offset` can no longer be recorded: a commit failed (the
   * partition is most likely lost), or an earlier record was abandoned. Lets a settlement check
   * before it publishes anything.
   */
  assertOpen(offset: number): void;
  /** Records `offset` as settled, for the next commit. Throws as `assertOpen` does. */
  settle(offset: number): void;
  /**
   * Marks a record that could not be settled: the offset never moves past it, and every later
   * record's settlement is refused (they will be redelivered with it).
   */
  abandon(offset: number): void;
  /**
   * Commits the settled prefix if it moved since the last commit, and resolves once every
   * settlement recorded before the call is committed, or a commit failed (then `barrier` is set
   * and `onError` was told). Never rejects.
   */
  commit(): Promise<void>;
  /** Where to read the partition again from: the lowest abandoned or uncommittable offset, if any. */
  readonly barrier: number | undefined;
}

/**
 * @example
 * const offsets = trackOffsets(batchCommit(payload, config.sessionTimeoutMs), (err) => log.warn({ err }));
 * const timer = setInterval(() => void offsets.commit(), config.commitIntervalMs);
 */
export function trackOffsets(
  commitUpTo: (next: number) => Promise<void>,
  onError: (error: unknown, from: number) => void,
): PartitionOffsets {
  // The tracked offsets in order, from `head` on not yet passed, and which of them are settled:
  // two arrays reused across the batch instead of a set and a queue that churn per record.
  const pending: number[] = [];
  const settled: boolean[] = [];
  let head = 0;
  let next = -1; // the first offset not yet safe to skip
  let committed = -1; // the offset last committed (the next to read), -1 before any commit
  let first = -1;
  let barrier: number | undefined;
  let failure: unknown;
  let inFlight: Promise<void> | undefined;

  const refusal = (offset: number): Error | undefined => {
    if (failure !== undefined)
      return failure instanceof Error ? failure : new Error(String(failure));
    if (barrier !== undefined && offset > barrier)
      return new TransportUnavailableError(
        'an earlier record of this partition could not be settled; this one will be redelivered',
      );
    return undefined;
  };

  const start = (): Promise<void> => {
    const target = next;
    return commitUpTo(target).then(
      () => {
        committed = Math.max(committed, target);
      },
      (error: unknown) => {
        // Not retried: the partition is most likely lost, and its records go to the next owner.
        failure = error;
        const from = committed < 0 ? first : committed;
        barrier = Math.min(barrier ?? Number.POSITIVE_INFINITY, from);
        onError(error, from);
      },
    );
  };

  return {
    track(offset) {
      if (first < 0) first = offset;
      pending.push(offset);
      settled.push(false);
    },
    get barrier() {
      return barrier;
    },
    assertOpen(offset) {
      const refused = refusal(offset);
      if (refused) throw refused;
    },
    settle(offset) {
      const refused = refusal(offset);
      if (refused) throw refused;
      const at = indexOf(pending, head, offset);
      if (at < 0) return;
      settled[at] = true;
      while (head < pending.length && settled[head]) {
        next = (pending[head] as number) + 1;
        head++;
      }
      if (head === pending.length) {
        pending.length = 0;
        settled.length = 0;
        head = 0;
      }
    },
    abandon(offset) {
      barrier = barrier === undefined ? offset : Math.min(barrier, offset);
    },
    async commit() {
      const target = next;
      while (failure === undefined && committed < target) {
        inFlight ??= start().finally(() => {
          inFlight = undefined;
        });
        await inFlight;
      }
    },
  };
}

/** Where `offset` is in `sorted` (ascending) from `from` on, or -1. */
function indexOf(sorted: readonly number[], from: number, offset: number): number {
  // Offsets of a partition are mostly contiguous: try the direct position first.
  const guess = from + offset - (sorted[from] ?? offset);
  if (sorted[guess] === offset) return guess;
  let lo = from;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = sorted[mid] as number;
    if (at === offset) return mid;
    if (at < offset) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
