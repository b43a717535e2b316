import type { ClaimResult } from '@onceflow/core';
import { expect } from 'vitest';
import { NON_UTF8_BYTES, sameBytes } from '../../envelopes.js';
import { beforeLeaseEnds, sleep, waitUntil } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';

const tokenOf = (r: ClaimResult): string => {
  if (r.status !== 'new' && r.status !== 'stale-pending')
    throw new Error(`expected a token, got ${r.status}`);
  return r.token;
};

/** Inbox.claim and what follows it: enqueue, release, stale claims. */
export const claimScenarios: StoreScenario[] = [
  {
    name: 'exactly one of 50 concurrent claims of one event is new; the others are in-flight',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => store.claim(env, { leaseMs: longLeaseMs })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 'new')).toHaveLength(1);
      expect(statuses.filter((s) => s === 'in-flight')).toHaveLength(49);
      const winner = results.find((r) => r.status === 'new');
      await store.release(env.source, env.id, winner ? tokenOf(winner) : '');
    },
  },
  {
    name: 'a claim of an enqueued or processed event with the same payload is a duplicate',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const token = tokenOf(await store.claim(env, { leaseMs: longLeaseMs }));
      await store.markEnqueued(env.source, env.id, token);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      const begun = await store.begin(env, { leaseMs: longLeaseMs, attempt: 1 });
      if (begun.status !== 'acquired') throw new Error(`begin: ${begun.status}`);
      await store.complete(env.source, env.id, begun.token);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'a claim with the same id and another payload is a conflict carrying the existing hash',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope({ payload: { v: 1 } });
      const other = envelope({ id: env.id, payload: { v: 2 } });
      const token = tokenOf(await store.claim(env, { leaseMs: longLeaseMs }));
      await store.markEnqueued(env.source, env.id, token);
      expect(await store.claim(other, { leaseMs: longLeaseMs })).toEqual({
        status: 'conflict',
        existingHash: env.payloadHash,
      });
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'a claim is in-flight while its lease lives and stale-pending, with a new token, once it runs out',
    async run({ store, envelope, shortLeaseMs, longLeaseMs, deadlineMs }) {
      const { env, started, first, held } = await beforeLeaseEnds(shortLeaseMs, async () => {
        const env = envelope();
        const started = Date.now();
        const first = tokenOf(await store.claim(env, { leaseMs: shortLeaseMs }));
        return { env, started, first, held: await store.claim(env, { leaseMs: shortLeaseMs }) };
      });
      expect(held, 'a claim while the lease lives').toEqual({ status: 'in-flight' });
      const stale = await waitUntil(
        async () => {
          const r = await store.claim(env, { leaseMs: longLeaseMs });
          return r.status === 'stale-pending' ? r : r.status === 'in-flight' ? undefined : r;
        },
        { timeoutMs: shortLeaseMs + deadlineMs, message: 'the claim to become stale-pending' },
      );
      expect(stale.status).toBe('stale-pending');
      expect(Date.now() - started, 'not before the lease ran out').toBeGreaterThanOrEqual(
        shortLeaseMs * 0.8,
      );
      const second = tokenOf(stale);
      expect(second).not.toBe(first);
      await store.markEnqueued(env.source, env.id, first); // the old holder: no effect
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'in-flight' });
      await store.markEnqueued(env.source, env.id, second);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'markEnqueued and release act only for the token that owns the claim; release makes the next claim new',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const token = tokenOf(await store.claim(env, { leaseMs: longLeaseMs }));
      await store.markEnqueued(env.source, env.id, 'not-the-token');
      await store.release(env.source, env.id, 'not-the-token');
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'in-flight' });
      await store.release(env.source, env.id, token);
      const again = await store.claim(env, { leaseMs: longLeaseMs });
      expect(again.status).toBe('new');
      await store.release(env.source, env.id, token); // the released token: no effect
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'in-flight' });
      await store.markEnqueued(env.source, env.id, tokenOf(again));
      await store.markEnqueued(env.source, env.id, tokenOf(again)); // harmless twice
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'takeStale re-leases pending claims whose lease ran out, up to limit, with their envelopes intact',
    async run({ store, envelope, shortLeaseMs, longLeaseMs }) {
      const stale = [0, 1, 2].map((i) =>
        envelope({
          key: `k${i}`,
          payload: new Uint8Array([...NON_UTF8_BYTES, i]),
          headers: { 'x-i': String(i) },
        }),
      );
      const enqueued = envelope();
      const live = envelope();
      for (const env of stale) tokenOf(await store.claim(env, { leaseMs: shortLeaseMs }));
      const t = tokenOf(await store.claim(enqueued, { leaseMs: shortLeaseMs }));
      await store.markEnqueued(enqueued.source, enqueued.id, t);
      const liveToken = tokenOf(await store.claim(live, { leaseMs: longLeaseMs }));
      await sleep(shortLeaseMs + 50); // let the short leases run out
      expect(
        await store.takeStale({ olderThanMs: 60_000, leaseMs: longLeaseMs, limit: 10 }),
      ).toEqual([]);

      const firstTwo = await store.takeStale({ olderThanMs: 0, leaseMs: longLeaseMs, limit: 2 });
      const rest = await store.takeStale({ olderThanMs: 0, leaseMs: longLeaseMs, limit: 10 });
      expect(firstTwo).toHaveLength(2);
      expect(rest).toHaveLength(1);
      expect(await store.takeStale({ olderThanMs: 0, leaseMs: longLeaseMs, limit: 10 })).toEqual(
        [],
      );
      const taken = [...firstTwo, ...rest];
      expect(new Set(taken.map((c) => c.envelope.id))).toEqual(new Set(stale.map((e) => e.id)));
      for (const claim of taken) {
        const sent = stale.find((e) => e.id === claim.envelope.id);
        expect({ ...claim.envelope, payload: undefined }).toEqual({ ...sent, payload: undefined });
        expect(sent && sameBytes(claim.envelope.payload, sent.payload)).toBe(true);
        expect(await store.claim(claim.envelope, { leaseMs: longLeaseMs })).toEqual({
          status: 'in-flight',
        });
        await store.markEnqueued(claim.envelope.source, claim.envelope.id, claim.token);
        expect(await store.claim(claim.envelope, { leaseMs: longLeaseMs })).toEqual({
          status: 'duplicate',
        });
      }
      await store.release(live.source, live.id, liveToken);
    },
  },
];
