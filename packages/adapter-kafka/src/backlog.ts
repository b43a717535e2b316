import type { BacklogReading, PartitionLag } from '@onceflow/core';
import type { Admin } from 'kafkajs';

/**
 * Per partition: the log end offset less the group's committed offset. A partition the group has
 * never committed on counts from its earliest retained record, where the group starts
 * (`fromBeginning`).
 */
async function lagOf(admin: Admin, groupId: string, topic: string): Promise<PartitionLag[]> {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
  return ends
    .map(({ partition, high, low }) => {
      const offset = at.get(partition) ?? -1;
      return { partition, lag: Math.max(0, Number(high) - (offset >= 0 ? offset : Number(low))) };
    })
    .sort((a, b) => a.partition - b.partition);
}

const total = (lag: readonly PartitionLag[]) => lag.reduce((n, p) => n + p.lag, 0);

/**
 * The workers' group lag on the work topic (`ready`, and per partition) and on its retry topics
 * (`delayed`: retry copies not yet consumed, due or not). Records handed to a member and not yet
 * committed are part of the lag: Kafka has no separate in-flight count.
 */
export async function readBacklog(
  admin: Admin,
  route: { readonly groupId: string; readonly main: string; readonly retries: readonly string[] },
): Promise<BacklogReading> {
  const [lag, ...retries] = await Promise.all(
    [route.main, ...route.retries].map((topic) => lagOf(admin, route.groupId, topic)),
  );
  return {
    queue: route.main,
    ready: total(lag ?? []),
    delayed: retries.reduce((n, r) => n + total(r), 0),
    lag,
  };
}
