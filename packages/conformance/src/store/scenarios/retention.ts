import type { Envelope, EventState } from '@onceflow/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired, claimed, completed, deadLettered, enqueued, retryScheduled } from '../steps.js';

const LONG_AGO = '2001-02-03T04:05:06.000Z';
const OLDEST = '1999-12-31T23:59:59.000Z';
const ANCIENT = '1990-01-01T00:00:00.000Z';
const HOUR_AGO = () => new Date(Date.now() - 60 * 60_000);

/** Retention (purge) and stats, over the record's states. */
export const retentionScenarios: StoreScenario[] = [
  {
    name: 'purge removes completed, discarded and enqueued records received before the cutoff and keeps dead-lettered, processing, retry-scheduled and received ones',
    async run({ store, envelope, source, longLeaseMs }) {
      const old = () => envelope({ receivedAt: LONG_AGO });
      const [done, discarded, queued] = [old(), old(), old()];
      const [dead, processing, retrying, received] = [old(), old(), old(), old()];
      const recent = envelope();
      await enqueued(store, done, longLeaseMs);
      await completed(store, done, longLeaseMs);
      await deadLettered(store, discarded);
      await store.act(source, discarded.id, { kind: 'discarded', actor: 'cli:a' });
      await enqueued(store, queued, longLeaseMs);
      await deadLettered(store, dead);
      const lease = await acquired(store, processing, { leaseMs: longLeaseMs });
      await retryScheduled(store, retrying, longLeaseMs);
      const claim = await claimed(store, received, longLeaseMs);
      await completed(store, recent, longLeaseMs);

      expect(await store.purge({ olderThan: HOUR_AGO() })).toBeGreaterThanOrEqual(3);
      for (const env of [done, discarded, queued]) {
        expect(await store.get(source, env.id), `${env.id} removed`).toBe(undefined);
      }
      const kept: [Envelope, EventState][] = [
        [dead, 'dead-lettered'],
        [processing, 'processing'],
        [retrying, 'retry-scheduled'],
        [received, 'received'],
        [recent, 'completed'],
      ];
      for (const [env, state] of kept) {
        expect((await store.get(source, env.id))?.state, `${state} kept`).toBe(state);
      }
      const again = await store.claim(done, { leaseMs: longLeaseMs });
      expect(again.status, 'purged: a claim is new again').toBe('new');
      if (again.status === 'new') await store.release(source, done.id, again.token);
      expect(await store.claim(received, { leaseMs: longLeaseMs })).toEqual({
        status: 'in-flight',
      });
      await store.release(source, received.id, claim);
      await store.release(source, processing.id, lease);
    },
  },
  {
    name: 'purge removes the records of events that never passed a receiver once they are old enough',
    async run({ store, envelope, source, longLeaseMs }) {
      const env = envelope();
      await completed(store, env, longLeaseMs);
      await store.purge({ olderThan: HOUR_AGO() });
      expect((await store.get(source, env.id))?.state, 'recent: kept').toBe('completed');
      expect(await store.begin(env, { leaseMs: longLeaseMs, attempt: 2 })).toEqual({
        status: 'processed',
      });
      expect(
        await store.purge({ olderThan: new Date(Date.now() + 60_000) }),
      ).toBeGreaterThanOrEqual(1);
      expect(await store.get(source, env.id)).toBe(undefined);
      const after = await store.begin(env, { leaseMs: longLeaseMs, attempt: 1 });
      expect(after.status, 'purged: a new attempt may run').toBe('acquired');
      if (after.status === 'acquired') await store.release(source, env.id, after.token);
    },
  },
  {
    name: 'purge with an aborted signal resolves with what it deleted, and the next purge removes the rest',
    async run({ store, envelope, source, longLeaseMs }) {
      const old = [envelope({ receivedAt: LONG_AGO }), envelope({ receivedAt: LONG_AGO })];
      for (const env of old) await completed(store, env, longLeaseMs);
      const stop = new AbortController();
      stop.abort();
      // A store stops between batches; one that deletes in one step may finish regardless.
      expect(
        await store.purge({ olderThan: HOUR_AGO(), signal: stop.signal }),
      ).toBeGreaterThanOrEqual(0);
      await store.purge({ olderThan: HOUR_AGO() });
      for (const env of old) {
        expect(await store.get(source, env.id), `${env.id} removed`).toBe(undefined);
      }
    },
  },
  {
    name: 'stats count received as pending, enqueued, processing and retry-scheduled as enqueued, completed and discarded as processed, dead letters in none',
    async run({ store, envelope, source, longLeaseMs }) {
      const before = await store.stats();
      const pending = envelope({ receivedAt: OLDEST });
      const old = () => envelope({ receivedAt: LONG_AGO });
      const [queued, processing, retrying, done] = [old(), old(), old(), old()];
      const ancient = () => envelope({ receivedAt: ANCIENT });
      const [discarded, dead] = [ancient(), ancient()];
      const claim = await claimed(store, pending, longLeaseMs);
      for (const env of [queued, processing, retrying, done, discarded, dead]) {
        await enqueued(store, env, longLeaseMs);
      }
      const lease = await acquired(store, processing, { leaseMs: longLeaseMs });
      await retryScheduled(store, retrying, longLeaseMs);
      await completed(store, done, longLeaseMs);
      await deadLettered(store, discarded);
      await store.act(source, discarded.id, { kind: 'discarded', actor: 'cli:a' });
      await deadLettered(store, dead);
      const clash = envelope({ id: queued.id, payload: 'other bytes' });
      expect((await store.claim(clash, { leaseMs: longLeaseMs })).status).toBe('conflict');
      await store.recordConflict(clash);

      const after = await store.stats();
      expect({
        pending: after.pending - before.pending,
        enqueued: after.enqueued - before.enqueued,
        processed: after.processed - before.processed,
        conflicts: after.conflicts - before.conflicts,
      }).toEqual({ pending: 1, enqueued: 3, processed: 2, conflicts: 1 });
      expect(after.oldestUnprocessedAt?.toISOString(), 'dead letters are not waiting').toBe(OLDEST);
      await store.release(source, pending.id, claim);
      await store.release(source, processing.id, lease);
    },
  },
];
