import {
  ConfigError,
  createWorker,
  defineHandler,
  hasInboxOutcomes,
  type InboxOutcomes,
} from '@onceflow/core';
import { createMemoryStore, createMemoryTransport } from '@onceflow/core/testing';
import { expect } from 'vitest';
import type { ConformanceStore, StoreScenario, StoreScenarioContext } from '../scenario.js';
import { acquired, claimed, deadLettered, enqueued } from '../steps.js';
import { waitUntil } from '../../wait.js';

const LONG_AGO = '2001-02-03T04:05:06.000Z';
/** Older than anything another scenario leaves waiting, so it is the oldest unprocessed event. */
const OLDEST_OF_ALL = '1980-01-01T00:00:00.000Z';
const HOUR_AGO = () => new Date(Date.now() - 60 * 60_000);

/** The store as a worker's `inbox` beside other `records`: it must have `InboxOutcomes`. */
function outcomes(store: ConformanceStore): ConformanceStore & InboxOutcomes {
  if (!hasInboxOutcomes(store)) {
    throw new Error(
      'the store has no markProcessed (InboxOutcomes): implement it, or declare inboxOutcomes: false',
    );
  }
  return store;
}

/**
 * `InboxOutcomes.markProcessed`: what a receiver's inbox does when the worker keeps its record in
 * another store and tells it the event is finished.
 */
export const inboxOutcomeScenarios: StoreScenario[] = [
  {
    name: 'markProcessed finishes an enqueued event: stats count it processed, no longer enqueued nor oldest unprocessed',
    async run(ctx) {
      const store = outcomes(ctx.store);
      const env = ctx.envelope({ receivedAt: OLDEST_OF_ALL });
      const before = await store.stats();
      await enqueued(store, env, ctx.longLeaseMs);
      const waiting = await store.stats();
      expect(waiting.enqueued - before.enqueued, 'enqueued').toBe(1);
      expect(waiting.oldestUnprocessedAt?.toISOString()).toBe(OLDEST_OF_ALL);

      await store.markProcessed(env.source, env.id);
      const after = await store.stats();
      expect({
        enqueued: after.enqueued - before.enqueued,
        processed: after.processed - before.processed,
        pending: after.pending - before.pending,
      }).toEqual({ enqueued: 0, processed: 1, pending: 0 });
      expect(after.oldestUnprocessedAt?.toISOString()).not.toBe(OLDEST_OF_ALL);
      expect((await ctx.record(env)).state).toBe('completed');
    },
  },
  {
    name: 'markProcessed ends a pending claim: the relay passes it over, a late markEnqueued changes nothing, a retry is a duplicate',
    async run(ctx) {
      const store = outcomes(ctx.store);
      const env = ctx.envelope();
      const claimedAt = Date.now();
      const token = await claimed(store, env, ctx.shortLeaseMs);
      await store.markProcessed(env.source, env.id);
      // Past the claim's lease, a pending claim would be the relay's.
      await waitUntil(async () => Date.now() > claimedAt + ctx.shortLeaseMs * 2 || undefined, {
        timeoutMs: ctx.deadlineMs,
        message: 'the claim lease to run out',
      });
      const stale = await store.takeStale({
        olderThanMs: 0,
        leaseMs: ctx.longLeaseMs,
        limit: 1000,
      });
      expect(stale.map((c) => c.envelope.id)).not.toContain(env.id);
      await store.markEnqueued(env.source, env.id, token);
      expect((await ctx.record(env)).state).toBe('completed');
      expect(await store.claim(env, { leaseMs: ctx.longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'markProcessed is idempotent and leaves finished, dead-lettered and processing records and unknown ids as they are',
    async run(ctx) {
      const store = outcomes(ctx.store);
      const [done, dead, processing, unknown] = [1, 2, 3, 4].map(() => ctx.envelope());
      if (!done || !dead || !processing || !unknown) throw new Error('unreachable');
      await enqueued(store, done, ctx.longLeaseMs);
      await store.markProcessed(done.source, done.id);
      const first = await ctx.record(done);
      await store.markProcessed(done.source, done.id);
      const again = await ctx.record(done);
      expect(again.state).toBe('completed');
      expect(again.history.length, 'a second mark writes nothing').toBe(first.history.length);

      await enqueued(store, dead, ctx.longLeaseMs);
      await deadLettered(store, dead);
      await store.markProcessed(dead.source, dead.id);
      expect((await ctx.record(dead)).state).toBe('dead-lettered');

      await enqueued(store, processing, ctx.longLeaseMs);
      const lease = await acquired(store, processing, { leaseMs: ctx.longLeaseMs });
      await store.markProcessed(processing.source, processing.id);
      expect((await ctx.record(processing)).state).toBe('processing');
      await store.release(processing.source, processing.id, lease);

      // No row: nothing to finish (a store may record it as processed).
      await store.markProcessed(unknown.source, unknown.id);
      const state = (await store.get(unknown.source, unknown.id))?.state;
      expect([undefined, 'completed']).toContain(state);
    },
  },
  {
    name: 'markProcessed of one event from many workers at once finishes it once',
    async run(ctx) {
      const store = outcomes(ctx.store);
      const env = ctx.envelope();
      await enqueued(store, env, ctx.longLeaseMs);
      const before = await store.stats();
      await Promise.all(Array.from({ length: 8 }, () => store.markProcessed(env.source, env.id)));
      const after = await store.stats();
      expect(after.processed - before.processed).toBe(1);
      expect(after.enqueued - before.enqueued).toBe(-1);
      const completions = (await ctx.record(env)).history.filter((h) => h.state === 'completed');
      expect(completions).toHaveLength(1);
    },
  },
  {
    name: 'purge removes what markProcessed finished once it was received before the cutoff',
    async run(ctx) {
      const store = outcomes(ctx.store);
      const [fromClaim, fromQueue] = [
        ctx.envelope({ receivedAt: LONG_AGO }),
        ctx.envelope({ receivedAt: LONG_AGO }),
      ];
      await claimed(store, fromClaim, ctx.longLeaseMs);
      await enqueued(store, fromQueue, ctx.longLeaseMs);
      for (const env of [fromClaim, fromQueue]) await store.markProcessed(env.source, env.id);
      expect(await store.purge({ olderThan: HOUR_AGO() })).toBeGreaterThanOrEqual(2);
      for (const env of [fromClaim, fromQueue]) {
        expect(await store.get(env.source, env.id), `${env.id} purged`).toBe(undefined);
      }
    },
  },
];

/**
 * For a store that declares `inboxOutcomes: false`: the worker refuses it as its `inbox` beside
 * other records (it could never learn an event is done), so it can serve a receiver only as the
 * worker's `records` too.
 */
export const noInboxOutcomeScenarios: StoreScenario[] = [
  {
    name: 'a store without InboxOutcomes is refused as a worker inbox beside other records',
    async run({ store }: StoreScenarioContext) {
      expect(hasInboxOutcomes(store), 'declared inboxOutcomes: false').toBe(false);
      const handlers = [defineHandler({ type: 'conformance.noop', handle: async () => {} })];
      const transport = createMemoryTransport();
      expect(() =>
        createWorker({ transport, records: createMemoryStore(), inbox: store as never, handlers }),
      ).toThrow(ConfigError);
      // As `records` itself it is the usual shape.
      expect(() => createWorker({ transport, records: store, handlers })).not.toThrow();
    },
  },
];
