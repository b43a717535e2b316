import { createBullmqTransport, deleteBullmqQueue } from '@onceflow/adapter-bullmq';
import type { Stack, StackOptions } from '../stack.js';
import { openPostgresStores } from './postgres-stores.js';

/** The shared Redis (it keeps nothing on disk: fine for a demo, not for production). */
const redisUrl = (): string => process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * BullMQ on Redis for the queue (`demo-<runId>` and its dead-letter queue), PostgreSQL for the
 * inbox, the processed-guard and the ledger. The run's owner deletes both queues on close.
 */
export async function bullmqStack(options: StackOptions): Promise<Stack> {
  const stores = await openPostgresStores(options);
  const queue = { url: redisUrl(), queue: `demo-${options.runId}` };
  const transport = createBullmqTransport(queue);
  try {
    await transport.start();
  } catch (err) {
    await stores.close();
    throw err;
  }
  return {
    broker: 'bullmq',
    inbox: stores.inbox,
    processed: stores.processed,
    transport,
    ledger: stores.ledger,
    async close() {
      await transport.close();
      if (options.owner) await deleteBullmqQueue(queue);
      await stores.close();
    },
  };
}
