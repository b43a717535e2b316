import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired, claimed, failure } from '../steps.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const RECEIVED_AT = '2001-02-03T04:05:06.000Z';

/** The record's states from first sight to completion, and the ways an attempt gives up its lease. */
export const lifecycleScenarios: StoreScenario[] = [
  {
    name: 'begin creates the record of an event that never passed a receiver, in processing, from the envelope',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope({
        type: 'order.paid',
        key: 'cus_1',
        receivedAt: RECEIVED_AT,
        headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
      });
      expect(await store.get(env.source, env.id), 'no record before the first delivery').toBe(
        undefined,
      );
      await acquired(store, env, { leaseMs: longLeaseMs, attempt: 3, consumer: 'worker-a' });
      const r = await record(env);
      expect(r).toMatchObject({
        source: env.source,
        id: env.id,
        type: 'order.paid',
        key: 'cus_1',
        state: 'processing',
        attempts: 3,
        consumer: 'worker-a',
        traceId: TRACE_ID,
        receivedAt: RECEIVED_AT,
      });
      expect(Number.isNaN(Date.parse(r.updatedAt)), 'updatedAt is ISO-8601').toBe(false);
      expect(r.history.map(({ state, attempt, actor }) => ({ state, attempt, actor }))).toEqual([
        { state: 'processing', attempt: 3, actor: 'worker-a' },
      ]);
    },
  },
  {
    name: 'claim, markEnqueued, begin and complete walk received, enqueued, processing, completed with one history entry each',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const token = await claimed(store, env, longLeaseMs);
      expect((await record(env)).state).toBe('received');
      await store.markEnqueued(env.source, env.id, token);
      expect((await record(env)).state).toBe('enqueued');
      const lease = await acquired(store, env, { leaseMs: longLeaseMs, consumer: 'worker-a' });
      expect((await record(env)).state).toBe('processing');
      await store.complete(env.source, env.id, lease);
      await store.complete(env.source, env.id, lease); // idempotent: no second entry
      const r = await record(env);
      expect(r).toMatchObject({ state: 'completed', attempts: 1, consumer: 'worker-a' });
      expect(r.history.map((h) => h.state)).toEqual([
        'received',
        'enqueued',
        'processing',
        'completed',
      ]);
      expect(r.history.slice(2)).toMatchObject([
        { attempt: 1, actor: 'worker-a' },
        { attempt: 1, actor: 'worker-a' },
      ]);
      const times = r.history.map((h) => Date.parse(h.at));
      expect(times.every((t, i) => !Number.isNaN(t) && t >= (times[i - 1] ?? t))).toBe(true);
      expect(r.updatedAt).toBe(r.history.at(-1)?.at);
      expect(await store.begin(env, { leaseMs: longLeaseMs, attempt: 2 })).toEqual({
        status: 'processed',
      });
    },
  },
  {
    name: "a worker that begins before the receiver's markEnqueued or release keeps the record where it put it",
    async run({ store, envelope, record, longLeaseMs }) {
      const done = envelope();
      const running = envelope();
      const doneClaim = await claimed(store, done, longLeaseMs);
      const runningClaim = await claimed(store, running, longLeaseMs);
      const doneLease = await acquired(store, done, { leaseMs: longLeaseMs });
      await store.complete(done.source, done.id, doneLease);
      const lease = await acquired(store, running, { leaseMs: longLeaseMs });
      await store.markEnqueued(done.source, done.id, doneClaim);
      await store.release(running.source, running.id, runningClaim); // the publish "failed"
      expect((await record(done)).state, 'not back to enqueued').toBe('completed');
      expect((await record(running)).state, 'not removed').toBe('processing');
      expect(await store.claim(done, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      expect(await store.claim(running, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      await store.complete(running.source, running.id, lease);
      expect((await record(running)).history.map((h) => h.state)).toEqual([
        'received',
        'processing',
        'completed',
      ]);
    },
  },
  {
    name: 'scheduleRetry records retry-scheduled with the last error and next attempt time; the next begin acquires attempt 2',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const token = await acquired(store, env, { leaseMs: longLeaseMs, consumer: 'worker-a' });
      const error = failure('upstream answered 503');
      const nextAttemptAt = new Date(Date.now() + 30_000);
      await store.scheduleRetry(env.source, env.id, token, { error, nextAttemptAt });
      const r = await record(env);
      expect(r).toMatchObject({
        state: 'retry-scheduled',
        attempts: 1,
        lastError: error,
        nextAttemptAt: nextAttemptAt.toISOString(),
      });
      expect(r.history.at(-1)).toMatchObject({
        state: 'retry-scheduled',
        attempt: 1,
        code: error.code,
        actor: 'worker-a',
      });
      await acquired(store, env, { leaseMs: longLeaseMs, attempt: 2, consumer: 'worker-b' });
      expect(await record(env)).toMatchObject({
        state: 'processing',
        attempts: 2,
        consumer: 'worker-b',
      });
    },
  },
  {
    name: 'release gives the lease up unused: the record is enqueued again and the next begin acquires at once',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const token = await acquired(store, env, { leaseMs: longLeaseMs });
      await store.release(env.source, env.id, token);
      const r = await record(env);
      expect(r.state).toBe('enqueued');
      expect(r.history.map((h) => h.state)).toEqual(['processing', 'enqueued']);
      const again = await store.begin(env, { leaseMs: longLeaseMs, attempt: 2 });
      expect(again.status, 'the lease is free').toBe('acquired');
      expect(await store.extend(env.source, env.id, token, longLeaseMs), 'old token').toBe(false);
    },
  },
];
