import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';
import { connect, deleteKeys, randomPrefix } from './helpers.js';

const redis = connect();
const store = createRedisInbox({ redis, prefix: randomPrefix(), retentionMs: 300 });

afterAll(async () => {
  await deleteKeys(redis, store.keyBase);
  await redis.quit();
});

describe('redis inbox retention (key TTL)', () => {
  it('enqueued and processed rows expire after retentionMs, pending ones stay; stats follow', async () => {
    const lease = { leaseMs: 60_000 };
    const now = () => testEnvelope({ source: 'retention', receivedAt: new Date().toISOString() });
    const [enqueued, processed, pending] = [now(), now(), now()];
    for (const env of [enqueued, processed]) {
      const claim = await store.claim(env, lease);
      if (claim.status !== 'new') throw new Error(claim.status);
      await store.markEnqueued(env.source, env.id, claim.token);
    }
    const begun = await store.begin(processed, { ...lease, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error(begun.status);
    await store.complete(processed.source, processed.id, begun.token);
    const held = await store.claim(pending, { leaseMs: 100 });
    expect(held.status).toBe('new');
    expect(await store.stats()).toMatchObject({ pending: 1, enqueued: 1, processed: 1 });

    await waitUntil(
      async () => (await store.claim(enqueued, lease)).status === 'new' || undefined,
      {
        timeoutMs: 5000,
        message: 'the enqueued row to expire',
      },
    );
    await waitUntil(
      async () =>
        (await store.begin(processed, { ...lease, attempt: 2 })).status === 'acquired' || undefined,
      { timeoutMs: 5000, message: 'the processed row to expire' },
    );
    const stats = await store.stats();
    expect(stats).toMatchObject({ pending: 2, enqueued: 0, processed: 0 });
    expect(stats.oldestUnprocessedAt?.toISOString()).toBe(
      [enqueued, pending].map((e) => e.receivedAt).sort()[0],
    );
    const stale = await store.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 });
    expect(
      stale.map((c) => c.envelope.id),
      'a pending claim outlives the retention',
    ).toEqual([pending.id]);
  });
});
