import type { StoreTarget, TargetOptions } from '../target.js';
import { loadPackages } from './broker.js';

/**
 * `--store redis`: the Redis store at `ONCEFLOW_REDIS_URL` (default `redis://127.0.0.1:6379`)
 * under the key prefix `ONCEFLOW_REDIS_PREFIX` (default `onceflow:inbox`, the store's own):
 * event record and inbox. No inbox browser: the Redis store drops an envelope once enqueued
 * (dead letters keep theirs). Keys exist implicitly, so an unknown prefix holds no records
 * rather than failing. One connection, no reconnect loop: an unreachable server fails at once.
 */
export async function openRedis(options: TargetOptions): Promise<StoreTarget> {
  const { Redis, store } = await loadPackages(
    '--store redis',
    '@onceflow/inbox-redis and ioredis',
    async () => ({
      Redis: (await import('ioredis')).Redis,
      store: await import('@onceflow/inbox-redis'),
    }),
  );
  const url = options.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    connectionName: 'onceflow-cli',
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `no Redis at ${url.replace(/\/\/.*@/, '//')} (set ONCEFLOW_REDIS_URL, or redis.url in the config file): ${(err as Error).message}`,
    );
  }
  try {
    const inbox = store.createRedisInbox({ redis, prefix: options.env.ONCEFLOW_REDIS_PREFIX });
    return { records: inbox, inbox, close: async () => void (await redis.quit()) };
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}
