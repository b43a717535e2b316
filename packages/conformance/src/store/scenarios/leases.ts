import { expect } from 'vitest';
import { beforeLeaseEnds, waitUntil } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';
import { failure } from '../steps.js';

/** The processing lease: one attempt at a time, and a lost lease's writes are no-ops. */
export const leaseScenarios: StoreScenario[] = [
  {
    name: 'of 20 concurrent begins on one event one acquires; after a lease runs out attempt 2 acquires and the first token changes nothing',
    async run({ store, envelope, record, shortLeaseMs, longLeaseMs, deadlineMs }) {
      // The race runs under the long lease: a slow round must not let a second begin in.
      const raced = envelope();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.begin(raced, { leaseMs: longLeaseMs, attempt: 1, consumer: `worker-${i}` }),
        ),
      );
      const winners = results.filter((r) => r.status === 'acquired');
      expect(winners).toHaveLength(1);
      const busy = results.filter((r) => r.status === 'busy');
      expect(busy).toHaveLength(19);
      for (const r of busy) {
        expect(r.retryAfterMs, 'what is left of the lease').toBeGreaterThan(longLeaseMs / 2);
        expect(r.retryAfterMs).toBeLessThanOrEqual(longLeaseMs);
      }
      expect((await record(raced)).history, 'one attempt started').toHaveLength(1);

      const { env, first, held, started } = await beforeLeaseEnds(shortLeaseMs, async () => {
        const env = envelope();
        const started = Date.now();
        const taken = await store.begin(env, { leaseMs: shortLeaseMs, attempt: 1 });
        if (taken.status !== 'acquired') throw new Error(`begin: ${taken.status}`);
        const held = await store.begin(env, { leaseMs: shortLeaseMs, attempt: 1 });
        return { env, first: taken.token, held, started };
      });
      expect(held.status, 'a begin while the short lease lives').toBe('busy');
      if (held.status === 'busy') {
        expect(held.retryAfterMs).toBeGreaterThan(0);
        expect(held.retryAfterMs).toBeLessThanOrEqual(shortLeaseMs);
      }
      const second = await waitUntil(
        async () => {
          const r = await store.begin(env, { leaseMs: longLeaseMs, attempt: 2, consumer: 'late' });
          return r.status === 'acquired' ? r.token : r.status === 'busy' ? undefined : r.status;
        },
        { timeoutMs: shortLeaseMs + deadlineMs, message: 'a begin after the lease ran out' },
      );
      expect(Date.now() - started, 'not before the lease ran out').toBeGreaterThanOrEqual(
        shortLeaseMs * 0.8,
      );
      expect(second).not.toBe(first);
      const taken = await record(env);
      expect(taken).toMatchObject({ state: 'processing', attempts: 2, consumer: 'late' });

      await store.complete(env.source, env.id, first);
      await store.scheduleRetry(env.source, env.id, first, {
        error: failure('too late'),
        nextAttemptAt: new Date(Date.now() + 60_000),
      });
      await store.release(env.source, env.id, first);
      expect(await store.extend(env.source, env.id, first, longLeaseMs)).toBe(false);
      expect(await record(env), 'the first token changed nothing').toEqual(taken);
      expect((await store.begin(env, { leaseMs: longLeaseMs, attempt: 3 })).status).toBe('busy');

      await store.complete(env.source, env.id, second);
      expect((await record(env)).state).toBe('completed');
    },
  },
  {
    name: 'extend renews the lease only for the token that owns it',
    async run({ store, envelope, shortLeaseMs, longLeaseMs, deadlineMs }) {
      const { env, token, stranger, owner } = await beforeLeaseEnds(shortLeaseMs, async () => {
        const env = envelope();
        const r = await store.begin(env, { leaseMs: shortLeaseMs, attempt: 1 });
        if (r.status !== 'acquired') throw new Error(`begin: ${r.status}`);
        const stranger = await store.extend(env.source, env.id, 'not-the-token', longLeaseMs);
        const owner = await store.extend(env.source, env.id, r.token, longLeaseMs);
        return { env, token: r.token, stranger, owner };
      });
      expect(stranger).toBe(false);
      expect(owner).toBe(true);
      const busy = await store.begin(env, { leaseMs: longLeaseMs, attempt: 2 });
      expect(busy.status).toBe('busy');
      if (busy.status === 'busy') {
        expect(busy.retryAfterMs, 'the renewed lease is the long one').toBeGreaterThan(
          shortLeaseMs + deadlineMs,
        );
      }
      await store.complete(env.source, env.id, token);
    },
  },
];
