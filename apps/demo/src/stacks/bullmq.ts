import { createBullmqTransport, deleteBullmqQueue } from '@onceflow/adapter-bullmq';
import { createRedisInbox } from '@onceflow/inbox-redis';
import { Redis } from 'ioredis';
import { DEMO_LOCK_MS } from '../lock.js';
import type { Stack, StackOptions } from '../stack.js';
import { openPostgresStores, stackOnPostgres } from './postgres-stores.js';

/** The shared Redis (it keeps nothing on disk: fine for a demo, not for production). */
const redisUrl = (): string => process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under `keyBase` (SCAN, so the shared Redis is never blocked). */
async function deleteKeys(redis: Redis, keyBase: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyBase}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/**
 * BullMQ on Redis for the queue (`demo-<runId>` and its dead-letter queue) and, on the same
 * Redis, the receiver's inbox (`{onceflow-demo:<runId>:inbox}:…`). The processed-guard and the
 * ledger stay in PostgreSQL: the ledger writes its row and the processed mark in one PostgreSQL
 * transaction, so the guard must read the same table. The run's owner deletes both queues and
 * the inbox keys on close.
 */
export async function bullmqStack(options: StackOptions): Promise<Stack> {
  const stores = await openPostgresStores(options);
  const url = redisUrl();
  const queue = { url, queue: `demo-${options.runId}`, lockMs: DEMO_LOCK_MS };
  const transport = createBullmqTransport(queue);
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const inbox = createRedisInbox({ redis, prefix: `onceflow-demo:${options.runId}:inbox` });
  try {
    await redis.connect();
    await transport.start();
  } catch (err) {
    redis.disconnect();
    await stores.close();
    throw err;
  }
  return stackOnPostgres({
    broker: 'bullmq',
    options,
    stores,
    transport,
    inbox,
    remove: async () => {
      await deleteBullmqQueue(queue);
      await deleteKeys(redis, inbox.keyBase);
    },
    release: () =>
      redis.quit().then(
        () => {},
        () => redis.disconnect(),
      ),
  });
}
