import { isOnceflowError } from '@onceflow/core';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';
import { connect, randomPrefix } from './helpers.js';

describe('check (readiness)', () => {
  it('answers PING while Redis does', async () => {
    const redis = connect();
    const store = createRedisInbox({ redis, prefix: randomPrefix() });
    await expect(store.check(AbortSignal.timeout(5_000))).resolves.toBeUndefined();
    await redis.quit();
  });

  it('rejects with StoreUnavailableError when Redis is unreachable', async () => {
    // Port 1 on loopback: nothing listens; the client keeps reconnecting.
    const redis = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true });
    redis.on('error', () => undefined);
    const store = createRedisInbox({ redis, prefix: randomPrefix(), timeoutMs: 1_000 });
    const err = await store.check(AbortSignal.timeout(5_000)).catch((e: unknown) => e);
    expect(isOnceflowError(err, 'STORE_UNAVAILABLE')).toBe(true);
    redis.disconnect();
  });
});
