import { TransportUnavailableError } from '@onceflow/core';
import { brokerCall } from '@onceflow/core/kit';
import type { EachBatchPayload } from 'kafkajs';

/** Commit errors after which this member no longer holds the partition (or may not). */
const LOST = new Set([
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'FENCED_INSTANCE_ID',
  'REBALANCE_IN_PROGRESS',
]);

/** True when the broker refused a commit because this member no longer holds the partition. */
const refused = (err: unknown): boolean => {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && LOST.has(type);
};

/**
 * Commits one partition's offset through the batch's own group membership: unlike
 * `consumer.commitOffsets`, which reports success without committing while the consumer is not
 * running (e.g. restarting after a crash), this reaches the broker or rejects, with the generation
 * the batch was fetched under (a newer one refuses it). A commit without an answer within
 * `limitMs` rejects with `TransportUnavailableError` (it may still land; the record is then
 * redelivered, a duplicate, never a loss).
 */
export function batchCommit(
  payload: Pick<EachBatchPayload, 'batch' | 'commitOffsetsIfNecessary'>,
  limitMs: number,
): (next: number) => Promise<void> {
  const { topic, partition } = payload.batch;
  return async (next) => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TransportUnavailableError(`kafka: offset commit unanswered after ${limitMs} ms`),
          ),
        limitMs,
      );
    });
    const committed = payload.commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition, offset: String(next) }] }],
    });
    try {
      await brokerCall('kafka offset commit', () => Promise.race([committed, expired]), {
        lockLost: refused,
      });
    } catch (err) {
      committed.catch(() => undefined); // a late failure after the time limit is not reported twice
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };
}
