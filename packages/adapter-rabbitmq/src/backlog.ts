import type { BacklogReading } from '@onceflow/core';
import type { Channel } from 'amqplib';
import type { QueueNames } from './topology.js';

/** A queue the broker does not have (404 NOT_FOUND closes the channel it was asked on). */
const notFound = (err: unknown): boolean => (err as { code?: unknown }).code === 404;

/**
 * The work queue's ready messages, and the messages waiting in its retry queues (one per delay
 * bucket; a bucket never used does not exist and counts 0), each asked on a channel of its own
 * (`withChannel`). AMQP tells only ready messages: deliveries held unacknowledged by consumers are
 * not counted anywhere, so there is no `inFlight` (the management plugin's `rabbitmq_prometheus`
 * has `messages_unacked` per queue).
 */
export async function readBacklog(
  names: QueueNames,
  retryDelaysMs: readonly number[],
  withChannel: <T>(what: string, body: (ch: Channel) => Promise<T>) => Promise<T>,
): Promise<BacklogReading> {
  const count = (queue: string) =>
    withChannel('backlog', async (ch) => {
      try {
        return (await ch.checkQueue(queue)).messageCount;
      } catch (err) {
        if (notFound(err)) return 0;
        throw err;
      }
    });
  const [ready = 0, ...waiting] = await Promise.all(
    [names.work, ...retryDelaysMs.map((d) => names.retry(d))].map(count),
  );
  return { queue: names.work, ready, delayed: waiting.reduce((n, c) => n + c, 0) };
}
