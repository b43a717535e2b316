import amqp from 'amqplib';
import { DEFAULT_RETRY_DELAYS_MS, defaultAmqpUrl } from './config.js';
import { queueNames } from './topology.js';

/**
 * Deletes a work queue and every queue derived from it (dead-letter queue, the retry queues of
 * both for the given delay buckets), with their messages. For tests, demos and tearing down an environment;
 * never called by the transport itself. Missing queues are skipped.
 *
 * @example
 * await deleteRabbitMqQueues({ queue: 'payments' });
 */
export async function deleteRabbitMqQueues(options: {
  readonly queue: string;
  readonly url?: string | undefined;
  readonly retryDelaysMs?: readonly number[] | undefined;
}): Promise<void> {
  const names = queueNames(options.queue);
  const conn = await amqp.connect(options.url ?? defaultAmqpUrl());
  try {
    const ch = await conn.createChannel();
    const buckets = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    const all = [
      names.work,
      names.deadLetter,
      ...buckets.flatMap((d) => [names.retry(d), names.retry(d, names.deadLetter)]),
    ];
    for (const name of all) await ch.deleteQueue(name);
    await ch.close();
  } finally {
    await conn.close().catch(() => {});
  }
}
