import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A prefix no other run uses; tests delete only keys under it. */
export const randomPrefix = (): string => `onceflow-test:${randomBytes(6).toString('hex')}`;

/** A client that fails at once when Redis is missing, instead of queueing commands for ever. */
export function connect(url = REDIS_URL): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false });
}

/** Deletes every key under `{prefix}:` (SCAN, so the shared server is never blocked). */
export async function deleteKeys(redis: Redis, keyBase: string): Promise<number> {
  if (!keyBase.startsWith('{onceflow-test:')) throw new Error(`refusing to delete ${keyBase}*`);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyBase}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
