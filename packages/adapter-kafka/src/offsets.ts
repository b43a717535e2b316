import { TransportUnavailableError } from '@onceflow/core';

/**
 * The committed position of one partition while a batch is handled: records finish in any order,
 * the group offset only moves past a contiguous prefix of finished records, one commit at a time
 * (later finishes coalesce into the next commit). `finish(offset)` resolves once a commit covering
 * that record succeeded, and rejects if that commit failed (the record will then be redelivered).
 * Not shared across partitions.
 */
export interface PartitionOffsets {
  /** Registers a record about to be handled; call in offset order. */
  track(offset: number): void;
  finish(offset: number): Promise<void>;
  /**
   * Marks a record that could not be settled: the offset never moves past it, and every later
   * record's `finish` rejects (they will be redelivered with it).
   */
  abandon(offset: number): void;
  /** The abandoned record with the lowest offset, if any. */
  readonly barrier: number | undefined;
}

interface Waiter {
  readonly offset: number;
  resolve(): void;
  reject(error: unknown): void;
}

/** @example const offsets = trackOffsets(batchCommit(payload, config.sessionTimeoutMs)); */
export function trackOffsets(commit: (next: number) => Promise<void>): PartitionOffsets {
  const pending: number[] = [];
  const finished = new Set<number>();
  let waiters: Waiter[] = [];
  let next = -1; // the first offset not yet safe to skip
  let committed = -1;
  let committing = false;
  let barrier: number | undefined;
  let failure: unknown;
  let first = -1;
  const behind = (error: unknown) => {
    const late = waiters.filter((w) => barrier !== undefined && w.offset > barrier);
    waiters = waiters.filter((w) => !(barrier !== undefined && w.offset > barrier));
    for (const w of late) w.reject(error);
  };
  const blocked = () =>
    new TransportUnavailableError(
      'an earlier record of this partition could not be settled; this one will be redelivered',
    );

  const run = async (): Promise<void> => {
    if (committing || next <= committed || failure !== undefined) return;
    committing = true;
    const target = next;
    try {
      await commit(target);
      committed = target;
      const done = waiters.filter((w) => w.offset < target);
      waiters = waiters.filter((w) => w.offset >= target);
      for (const w of done) w.resolve();
    } catch (error) {
      // Not retried: the partition is most likely lost, and its records go to the next owner.
      failure = error;
      barrier = Math.min(barrier ?? Number.POSITIVE_INFINITY, committed < 0 ? first : committed);
      const all = waiters;
      waiters = [];
      for (const w of all) w.reject(error);
    } finally {
      committing = false;
      void run();
    }
  };

  return {
    track(offset) {
      if (first < 0) first = offset;
      pending.push(offset);
    },
    get barrier() {
      return barrier;
    },
    abandon(offset) {
      barrier = barrier === undefined ? offset : Math.min(barrier, offset);
      behind(blocked());
    },
    finish(offset) {
      if (failure !== undefined) return Promise.reject(failure);
      if (barrier !== undefined && offset > barrier) return Promise.reject(blocked());
      finished.add(offset);
      while (pending.length > 0 && finished.has(pending[0] as number)) {
        const head = pending.shift() as number;
        finished.delete(head);
        next = head + 1;
      }
      const settled = new Promise<void>((resolve, reject) => {
        waiters.push({ offset, resolve, reject });
      });
      void run();
      return settled;
    },
  };
}
