import amqp from 'amqplib';
import { DEFAULT_RETRY_DELAYS_MS, defaultAmqpUrl } from './config.js';
import { queueNames } from './topology.js';

/**
 * Deletes a work queue and every queue derived from it (dead-letter queue, retry queues of the
 * given delay buckets), with their messages. For tests, demos and tearing down an environment;
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
    const all = [
      names.work,
      names.deadLetter,
      ...(options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS).map((d) => names.retry(d)),
    ];
    for (const name of all) await ch.deleteQueue(name);
    await ch.close();
  } finally {
    await conn.close().catch(() => {});
  }
}
