import type { ClaimResult, Envelope, Inbox, ProcessedStore } from '@onceflow/core';
import { expect } from 'vitest';
import type { InboxScenario } from '../scenario.js';

const LONG_AGO = '2001-02-03T04:05:06.000Z';
const OLDEST = '1999-12-31T23:59:59.000Z';

type Store = Inbox & ProcessedStore;

async function claimed(store: Store, env: Envelope, leaseMs: number): Promise<string> {
  const r: ClaimResult = await store.claim(env, { leaseMs });
  if (r.status !== 'new') throw new Error(`claim of ${env.id}: ${r.status}`);
  return r.token;
}

async function enqueued(store: Store, env: Envelope, leaseMs: number): Promise<void> {
  await store.markEnqueued(env.source, env.id, await claimed(store, env, leaseMs));
}

async function processed(store: Store, env: Envelope, leaseMs: number): Promise<void> {
  await enqueued(store, env, leaseMs);
  const begun = await store.begin(env.source, env.id, { leaseMs });
  if (begun.status !== 'acquired') throw new Error(`begin of ${env.id}: ${begun.status}`);
  await store.complete(env.source, env.id, begun.token);
}

/** Retention (purge) and stats. */
export const retentionScenarios: InboxScenario[] = [
  {
    name: 'purge removes enqueued and processed rows received before the cutoff and keeps pending ones',
    async run({ store, envelope, longLeaseMs }) {
      const oldPending = envelope({ receivedAt: LONG_AGO });
      const oldEnqueued = envelope({ receivedAt: LONG_AGO });
      const oldProcessed = envelope({ receivedAt: LONG_AGO });
      const recent = envelope();
      const pendingToken = await claimed(store, oldPending, longLeaseMs);
      await enqueued(store, oldEnqueued, longLeaseMs);
      await processed(store, oldProcessed, longLeaseMs);
      await enqueued(store, recent, longLeaseMs);

      const removed = await store.purge({ olderThan: new Date(Date.now() - 60 * 60_000) });
      expect(removed).toBeGreaterThanOrEqual(2);
      expect(await store.claim(oldPending, { leaseMs: longLeaseMs }), 'pending kept').toEqual({
        status: 'in-flight',
      });
      expect(await store.claim(recent, { leaseMs: longLeaseMs }), 'recent kept').toEqual({
        status: 'duplicate',
      });
      const again = [
        await store.claim(oldEnqueued, { leaseMs: longLeaseMs }),
        await store.claim(oldProcessed, { leaseMs: longLeaseMs }),
      ];
      expect(
        again.map((r) => r.status),
        'old enqueued and processed removed',
      ).toEqual(['new', 'new']);
      await store.release(oldPending.source, oldPending.id, pendingToken);
      for (const [env, r] of [
        [oldEnqueued, again[0]],
        [oldProcessed, again[1]],
      ] as const) {
        if (r?.status === 'new') await store.release(env.source, env.id, r.token);
      }
    },
  },
  {
    name: 'purge also removes processed-guard rows of events that never passed the inbox',
    async run({ store, source, longLeaseMs }) {
      const id = 'evt-guard-only';
      const begun = await store.begin(source, id, { leaseMs: longLeaseMs });
      if (begun.status !== 'acquired') throw new Error(`begin: ${begun.status}`);
      await store.complete(source, id, begun.token);
      expect(await store.begin(source, id, { leaseMs: longLeaseMs })).toEqual({
        status: 'processed',
      });
      await store.purge({ olderThan: new Date(Date.now() - 60 * 60_000) });
      expect(await store.begin(source, id, { leaseMs: longLeaseMs }), 'recent: kept').toEqual({
        status: 'processed',
      });
      expect(
        await store.purge({ olderThan: new Date(Date.now() + 60_000) }),
      ).toBeGreaterThanOrEqual(1);
      const after = await store.begin(source, id, { leaseMs: longLeaseMs });
      expect(after.status, 'purged: a new attempt may run').toBe('acquired');
      if (after.status === 'acquired') await store.release(source, id, after.token);
    },
  },
  {
    name: 'stats count pending, enqueued, processed and conflicts, and give the oldest unprocessed receivedAt',
    async run({ store, envelope, longLeaseMs }) {
      const before = await store.stats();
      const pending = envelope({ receivedAt: OLDEST });
      const queued = envelope({ receivedAt: LONG_AGO });
      const done = envelope({ receivedAt: '1990-01-01T00:00:00.000Z' });
      const token = await claimed(store, pending, longLeaseMs);
      await enqueued(store, queued, longLeaseMs);
      await processed(store, done, longLeaseMs);
      const clash = envelope({ id: queued.id, payload: 'other bytes' });
      const answer = await store.claim(clash, { leaseMs: longLeaseMs });
      expect(answer.status).toBe('conflict');
      await store.recordConflict(clash);

      const after = await store.stats();
      expect({
        pending: after.pending - before.pending,
        enqueued: after.enqueued - before.enqueued,
        processed: after.processed - before.processed,
        conflicts: after.conflicts - before.conflicts,
      }).toEqual({ pending: 1, enqueued: 1, processed: 1, conflicts: 1 });
      expect(
        after.oldestUnprocessedAt?.toISOString(),
        'a processed event is not the oldest unprocessed',
      ).toBe(OLDEST);
      await store.release(pending.source, pending.id, token);
    },
  },
];
