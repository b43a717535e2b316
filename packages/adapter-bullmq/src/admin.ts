import { Queue } from 'bullmq';
import { type BullmqTransportConfig, parseBullmqConfig } from './config.js';
import { openRedis } from './connection.js';

/**
 * Deletes a queue and its dead-letter queue from Redis: every job, dead letter and key
 * (BullMQ `obliterate({ force: true })`). For tests, demos and decommissioning; run it only
 * when no transport uses the queue.
 *
 * @example
 * await deleteBullmqQueue({ url, queue: 'payments' });
 */
export async function deleteBullmqQueue(input: BullmqTransportConfig): Promise<void> {
  const config = parseBullmqConfig(input);
  const connection = openRedis(config.url, config.redis, 'worker', config.logger);
  try {
    for (const name of [config.queue, config.deadLetterQueue]) {
      const queue = new Queue(name, { connection, prefix: config.prefix });
      try {
        await queue.obliterate({ force: true });
      } finally {
        await queue.close();
      }
    }
  } finally {
    await connection.quit().catch(() => connection.disconnect());
  }
}
