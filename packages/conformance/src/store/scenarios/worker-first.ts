import { expect } from 'vitest';
import { sleep } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';
import { acquired, claimed, deadLettered, failure } from '../steps.js';

/** A worker can reach an event before the receiver's claim settles: the claim must not undo it. */
export const workerFirstScenarios: StoreScenario[] = [
  {
    name: 'a claim of an event a worker began, or dead-lettered, without a receiver is a duplicate',
    async run({ store, envelope, record, longLeaseMs }) {
      const begun = envelope();
      await acquired(store, begun, { leaseMs: longLeaseMs });
      expect(await store.claim(begun, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      expect(await record(begun)).toMatchObject({ state: 'processing' });
      const dead = envelope();
      await deadLettered(store, dead);
      expect(await store.claim(dead, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      expect(await record(dead)).toMatchObject({ state: 'dead-lettered' });
    },
  },
  {
    name: 'once a worker has begun an event whose claim is still pending, a claim past its lease is a duplicate and takeStale leaves it alone',
    async run({ store, envelope, record, shortLeaseMs, longLeaseMs }) {
      const env = envelope();
      await claimed(store, env, shortLeaseMs);
      await acquired(store, env, { leaseMs: longLeaseMs });
      await sleep(shortLeaseMs + 50); // let the claim's lease run out
      const taken = await store.takeStale({ olderThanMs: 0, leaseMs: longLeaseMs, limit: 1000 });
      expect(
        taken.map((c) => c.envelope.id),
        'takeStale takes no claim a worker holds',
      ).not.toContain(env.id);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      expect(await record(env)).toMatchObject({ state: 'processing' });
    },
  },
  {
    name: 'scheduleRetry without an error keeps the last error recorded',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const first = await acquired(store, env, { leaseMs: longLeaseMs });
      await store.scheduleRetry(env.source, env.id, first, {
        error: failure('attempt 1 failed'),
        nextAttemptAt: new Date(Date.now() + 60_000),
      });
      const second = await acquired(store, env, { leaseMs: longLeaseMs, attempt: 2 });
      await store.scheduleRetry(env.source, env.id, second, {
        nextAttemptAt: new Date(Date.now() + 60_000),
      });
      expect(await record(env)).toMatchObject({
        state: 'retry-scheduled',
        attempts: 2,
        lastError: { message: 'attempt 1 failed' },
      });
    },
  },
  {
    name: 'markEnqueued, release, complete, scheduleRetry and extend of an event the store never saw change nothing',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const later = { nextAttemptAt: new Date(Date.now() + 60_000) };
      await store.markEnqueued(env.source, env.id, 'no-such-token');
      await store.release(env.source, env.id, 'no-such-token');
      await store.complete(env.source, env.id, 'no-such-token');
      await store.scheduleRetry(env.source, env.id, 'no-such-token', later);
      expect(await store.extend(env.source, env.id, 'no-such-token', longLeaseMs)).toBe(false);
      expect(await store.get(env.source, env.id)).toBe(undefined);
    },
  },
];
