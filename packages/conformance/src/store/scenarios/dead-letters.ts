import { expect } from 'vitest';
import { NON_UTF8_BYTES, sameBytes } from '../../envelopes.js';
import { waitUntil } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';
import { acquired, completed, failure, retryScheduled } from '../steps.js';

const exhausted = { reason: 'attempts exhausted', attempts: 5, error: failure('still 503') };

/** Dead letters live in the record: kept whole, recorded once, never over a live attempt. */
export const deadLetterScenarios: StoreScenario[] = [
  {
    name: 'deadLetter keeps reason, attempts, last error and the envelope byte for byte',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope({
        type: 'order.paid',
        key: 'cus_1',
        payload: NON_UTF8_BYTES,
        headers: { 'x-tenant': 'acme' },
      });
      const token = await acquired(store, env, { leaseMs: longLeaseMs, attempt: 5, consumer: 'w' });
      await store.deadLetter(env, token, exhausted);
      const r = await record(env);
      expect(r).toMatchObject({
        state: 'dead-lettered',
        reason: exhausted.reason,
        attempts: 5,
        lastError: exhausted.error,
      });
      expect(r.history.at(-1)).toMatchObject({
        state: 'dead-lettered',
        attempt: 5,
        code: exhausted.error.code,
      });
      expect(r.envelope, 'the envelope is kept for a redrive').toBeDefined();
      expect({ ...r.envelope, payload: undefined }).toEqual({ ...env, payload: undefined });
      expect(r.envelope && sameBytes(r.envelope.payload, NON_UTF8_BYTES), 'payload bytes').toBe(
        true,
      );
    },
  },
  {
    name: 'begin answers dead-lettered for a dead letter and acquires it when the delivery is a redrive',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      await store.deadLetter(env, undefined, exhausted);
      expect(await store.begin(env, { leaseMs: longLeaseMs, attempt: 6 })).toEqual({
        status: 'dead-lettered',
      });
      expect((await record(env)).history, 'begin changed nothing').toHaveLength(1);
      await acquired(store, env, { leaseMs: longLeaseMs, attempt: 1, redrive: 'cli:ops' });
      expect(await record(env)).toMatchObject({ state: 'processing', attempts: 1 });
    },
  },
  {
    name: 'deadLetter twice is one dead letter',
    async run({ store, envelope, source, record, longLeaseMs }) {
      const env = envelope();
      const token = await acquired(store, env, { leaseMs: longLeaseMs });
      await store.deadLetter(env, token, exhausted);
      const again = { reason: 'again', attempts: 9, error: failure('other') };
      await store.deadLetter(env, token, again);
      await store.deadLetter(env, undefined, { ...again, note: 'broker dead-letter' });
      const r = await record(env);
      expect(r, 'the first dead letter stands').toMatchObject({
        state: 'dead-lettered',
        reason: exhausted.reason,
        attempts: exhausted.attempts,
        lastError: exhausted.error,
      });
      expect(r.history.filter((h) => h.state === 'dead-lettered')).toHaveLength(1);
      expect(await store.count({ source, state: 'dead-lettered' })).toBe(1);
    },
  },
  {
    name: 'deadLetter without a token records a broker dead letter when no live lease is held',
    async run({ store, envelope, record, longLeaseMs }) {
      const unseen = envelope({ payload: NON_UTF8_BYTES });
      const retried = envelope();
      await retryScheduled(store, retried, longLeaseMs, 3);
      for (const env of [unseen, retried]) {
        await store.deadLetter(env, undefined, {
          reason: 'delivery limit exceeded',
          attempts: 4,
          actor: 'broker',
          note: 'broker dead-letter',
        });
        const r = await record(env);
        expect(r).toMatchObject({ state: 'dead-lettered', reason: 'delivery limit exceeded' });
        expect(r.history.at(-1)).toMatchObject({ actor: 'broker', note: 'broker dead-letter' });
        expect(r.envelope && sameBytes(r.envelope.payload, env.payload)).toBe(true);
      }
      expect((await record(retried)).lastError, 'the last attempt error stays').toEqual(
        failure('attempt 3 failed'),
      );
    },
  },
  {
    name: 'deadLetter without a token records a dead letter once the attempt holding the lease has lost it',
    async run({ store, envelope, record, shortLeaseMs, deadlineMs }) {
      const env = envelope();
      const started = Date.now();
      await acquired(store, env, { leaseMs: shortLeaseMs });
      await waitUntil(
        async () => {
          await store.deadLetter(env, undefined, exhausted);
          return (await record(env)).state === 'dead-lettered';
        },
        { timeoutMs: shortLeaseMs + deadlineMs, message: 'a dead letter after the lease ran out' },
      );
      expect(Date.now() - started, 'not before the lease ran out').toBeGreaterThanOrEqual(
        shortLeaseMs * 0.8,
      );
      expect((await record(env)).history.map((h) => h.state)).toEqual([
        'processing',
        'dead-lettered',
      ]);
    },
  },
  {
    name: 'deadLetter with a stale token, or none, changes nothing while another attempt holds a live lease',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const stale = await acquired(store, env, { leaseMs: longLeaseMs });
      await store.release(env.source, env.id, stale);
      const live = await acquired(store, env, { leaseMs: longLeaseMs, attempt: 2 });
      const before = await record(env);
      await store.deadLetter(env, stale, exhausted);
      await store.deadLetter(env, 'not-a-token', exhausted);
      await store.deadLetter(env, undefined, exhausted);
      expect(await record(env), 'the live attempt owns the record').toEqual(before);
      await store.deadLetter(env, live, exhausted);
      expect((await record(env)).state, 'the lease owner may').toBe('dead-lettered');
    },
  },
  {
    name: 'deadLetter never turns a completed record into a dead letter',
    async run({ store, envelope, source, record, longLeaseMs }) {
      const env = envelope();
      await completed(store, env, longLeaseMs);
      const before = await record(env);
      await store.deadLetter(env, undefined, exhausted);
      expect(await record(env)).toEqual(before);
      expect(await store.count({ source, state: 'dead-lettered' })).toBe(0);
    },
  },
];
