import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { ConfigError } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';
import { connect, deleteKeys, randomPrefix } from './helpers.js';

const redis = connect();
const store = createRedisInbox({ redis, prefix: randomPrefix() });

afterAll(async () => {
  await deleteKeys(redis, store.keyBase);
  await redis.quit();
});

describe('redis inbox under concurrent callers', () => {
  it('concurrent relays never take the same stale claim, and take each one once', async () => {
    const envelopes = Array.from({ length: 40 }, () => testEnvelope({ source: 'races' }));
    await Promise.all(envelopes.map((env) => store.claim(env, { leaseMs: 50 })));
    const leases = envelopes.map((e) => `${store.keyBase}c:${e.source.length}:${e.source}:${e.id}`);
    await waitUntil(async () => (await redis.exists(...leases)) === 0 || undefined, {
      timeoutMs: 5000,
      message: 'the leases to run out',
    });
    const taken = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 }),
      ),
    );
    const ids = taken.flat().map((c) => c.envelope.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
  });

  it('rejects a prefix that would break the hash tag, and a missing client, with ConfigError', () => {
    expect(() => createRedisInbox({ redis, prefix: 'a{b}' })).toThrow(ConfigError);
    expect(() => createRedisInbox({ redis, retentionMs: 0 })).toThrow(ConfigError);
    expect(() => createRedisInbox({} as never)).toThrow(ConfigError);
  });
});
