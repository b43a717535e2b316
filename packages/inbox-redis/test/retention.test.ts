import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';
import { connect, deleteKeys, randomPrefix } from './helpers.js';

const redis = connect();
const RETENTION_MS = 300;
const keyBases: string[] = [];

/** A store on a key space of its own, so its stats and counts see only its own rows. */
function retained() {
  const store = createRedisInbox({ redis, prefix: randomPrefix(), retentionMs: RETENTION_MS });
  keyBases.push(store.keyBase);
  return store;
}

afterAll(async () => {
  for (const keyBase of keyBases) await deleteKeys(redis, keyBase);
  await redis.quit();
});

describe('redis inbox retention (key TTL)', () => {
  it('enqueued and processed rows expire after retentionMs, pending ones stay; stats follow', async () => {
    // The first stats are judged only when they came within the retention of the first row's
    // TTL being set: a stall of the machine past it may rightly have expired that row already.
    // Such a run is run again, on a key space of its own.
    for (let run = 1; ; run++) {
      const store = retained();
      const lease = { leaseMs: 60_000 };
      const now = () => testEnvelope({ source: 'retention', receivedAt: new Date().toISOString() });
      const [enqueued, processed, pending] = [now(), now(), now()];
      const started = Date.now(); // no TTL is set before this
      for (const env of [enqueued, processed]) {
        const claim = await store.claim(env, lease);
        if (claim.status !== 'new') throw new Error(claim.status);
        await store.markEnqueued(env.source, env.id, claim.token);
      }
      const begun = await store.begin(processed, { ...lease, attempt: 1 });
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await store.complete(processed.source, processed.id, begun.token);
      const held = await store.claim(pending, { leaseMs: 100 });
      const first = await store.stats();
      const elapsed = Date.now() - started;
      if (elapsed >= RETENTION_MS && run < 5) continue;
      expect(elapsed, 'a run whose stats came within the retention').toBeLessThan(RETENTION_MS);
      expect(held.status).toBe('new');
      expect(first).toMatchObject({ pending: 1, enqueued: 1, processed: 1 });

      await waitUntil(
        async () => (await store.claim(enqueued, lease)).status === 'new' || undefined,
        {
          timeoutMs: 5000,
          message: 'the enqueued row to expire',
        },
      );
      await waitUntil(
        async () =>
          (await store.begin(processed, { ...lease, attempt: 2 })).status === 'acquired' ||
          undefined,
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
      return;
    }
  });

  it('a dead letter never expires; discarding it gives it the TTL back, and records that expired leave list, count and the indexes', async () => {
    // The TTL given back is judged only when it was read within the retention of the discard: a
    // stall of the machine past it may rightly have expired the row already. Such a run is run
    // again, on a key space of its own.
    for (let run = 1; ; run++) {
      const records = retained();
      const lease = { leaseMs: 60_000, attempt: 1 };
      const [dead, done] = [testEnvelope({ source: 'dl' }), testEnvelope({ source: 'dl' })];
      await records.deadLetter(dead, undefined, { reason: 'attempts exhausted', attempts: 3 });
      const begun = await records.begin(done, lease);
      if (begun.status !== 'acquired') throw new Error(begun.status);
      await records.complete(done.source, done.id, begun.token);
      const row = (env: typeof dead) =>
        `${records.keyBase}r:${env.source.length}:${env.source}:${env.id}`;
      expect(await redis.pttl(row(dead)), 'no TTL while dead-lettered').toBe(-1);

      await waitUntil(
        async () => (await records.get(done.source, done.id)) === undefined || undefined,
        {
          timeoutMs: 5000,
          message: 'the completed record to expire',
        },
      );
      expect((await records.get(dead.source, dead.id))?.state, 'outlives the retention').toBe(
        'dead-lettered',
      );
      expect(await records.count({ state: 'completed' }), 'indexed count').toBe(0);
      expect(await records.count({ source: 'dl' }), 'scanned count').toBe(1);
      expect((await records.list({ limit: 10 })).records.map((r) => r.id)).toEqual([dead.id]);

      const discarding = Date.now(); // no TTL is given back before this
      expect(await records.act(dead.source, dead.id, { kind: 'discarded', actor: 'test' })).toBe(
        true,
      );
      const ttl = await redis.pttl(row(dead));
      const elapsed = Date.now() - discarding;
      if (elapsed >= RETENTION_MS && run < 5) continue;
      expect(elapsed, 'a run whose TTL was read within the retention').toBeLessThan(RETENTION_MS);
      expect(ttl, 'the TTL is back').toBeGreaterThan(0);
      await waitUntil(
        async () => (await records.get(dead.source, dead.id)) === undefined || undefined,
        {
          timeoutMs: 5000,
          message: 'the discarded record to expire',
        },
      );
      expect(await records.count({}), 'nothing left').toBe(0);
      expect((await records.list({ limit: 10 })).records).toEqual([]);
      await records.purge({ olderThan: new Date(0) }); // prunes the state indexes, deletes nothing
      expect(await records.stats(), 'stats prune open and done').toMatchObject({ processed: 0 });
      const indexes = ['s:d', 's:z', 's:x', 'done'].map((k) => `${records.keyBase}${k}`);
      expect(
        await Promise.all(indexes.map((k) => redis.zcard(k))),
        'purge, stats and list dropped the entries the expired rows left',
      ).toEqual([0, 0, 0, 0]);
      return;
    }
  });
});
