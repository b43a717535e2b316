import type { BeginResult } from '@onceflow/core';
import { expect } from 'vitest';
import { sleep, waitUntil } from '../../wait.js';
import type { InboxScenario } from '../scenario.js';

const tokenOf = (r: BeginResult): string => {
  if (r.status !== 'acquired') throw new Error(`expected acquired, got ${r.status}`);
  return r.token;
};

/** The worker's processed-guard: begin, complete, release, extend. */
export const processedScenarios: InboxScenario[] = [
  {
    name: 'begin acquires once; concurrent begins are busy with retryAfterMs while the lease lives',
    async run({ store, source, longLeaseMs }) {
      const id = 'evt-begin';
      const results = await Promise.all(
        Array.from({ length: 20 }, () => store.begin(source, id, { leaseMs: longLeaseMs })),
      );
      expect(results.filter((r) => r.status === 'acquired')).toHaveLength(1);
      const busy = results.filter((r) => r.status === 'busy');
      expect(busy).toHaveLength(19);
      for (const r of busy) {
        expect(r.retryAfterMs).toBeGreaterThan(0);
        expect(r.retryAfterMs).toBeLessThanOrEqual(longLeaseMs);
      }
    },
  },
  {
    name: 'complete makes every later begin processed, and completing twice is harmless',
    async run({ store, source, longLeaseMs }) {
      const id = 'evt-complete';
      const token = tokenOf(await store.begin(source, id, { leaseMs: longLeaseMs }));
      await store.complete(source, id, token);
      await store.complete(source, id, token);
      expect(await store.begin(source, id, { leaseMs: longLeaseMs })).toEqual({
        status: 'processed',
      });
      expect(
        await store.extend(source, id, token, longLeaseMs),
        'a completed lease cannot be extended',
      ).toBe(false);
    },
  },
  {
    name: 'release lets the next begin acquire; a token that does not own the lease releases nothing',
    async run({ store, source, longLeaseMs }) {
      const id = 'evt-release';
      const token = tokenOf(await store.begin(source, id, { leaseMs: longLeaseMs }));
      await store.release(source, id, 'not-the-token');
      expect((await store.begin(source, id, { leaseMs: longLeaseMs })).status).toBe('busy');
      await store.release(source, id, token);
      const again = tokenOf(await store.begin(source, id, { leaseMs: longLeaseMs }));
      await store.release(source, id, token); // the released token: no effect
      expect((await store.begin(source, id, { leaseMs: longLeaseMs })).status).toBe('busy');
      await store.complete(source, id, again);
    },
  },
  {
    name: 'releasing a processing lease leaves the event’s inbox claim as it was',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const claim = await store.claim(env, { leaseMs: longLeaseMs });
      if (claim.status !== 'new') throw new Error(`claim: ${claim.status}`);
      await store.markEnqueued(env.source, env.id, claim.token);
      const lease = tokenOf(await store.begin(env.source, env.id, { leaseMs: longLeaseMs }));
      await store.release(env.source, env.id, lease);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
      const again = tokenOf(await store.begin(env.source, env.id, { leaseMs: longLeaseMs }));
      await store.complete(env.source, env.id, again);
      expect(await store.claim(env, { leaseMs: longLeaseMs })).toEqual({ status: 'duplicate' });
    },
  },
  {
    name: 'extend renews the lease; once it ran out and another attempt took it, extend returns false',
    async run({ store, source, shortLeaseMs, longLeaseMs, deadlineMs }) {
      const id = 'evt-extend';
      const first = tokenOf(await store.begin(source, id, { leaseMs: shortLeaseMs }));
      await sleep(shortLeaseMs * 0.3);
      expect(await store.extend(source, id, first, shortLeaseMs * 2)).toBe(true);
      await sleep(shortLeaseMs); // past the first lease, well inside the renewed one
      expect(
        (await store.begin(source, id, { leaseMs: longLeaseMs })).status,
        'renewed lease still held',
      ).toBe('busy');
      const second = await waitUntil(
        async () => {
          const r = await store.begin(source, id, { leaseMs: longLeaseMs });
          return r.status === 'busy' ? undefined : r;
        },
        { timeoutMs: shortLeaseMs * 2 + deadlineMs, message: 'the abandoned lease to run out' },
      );
      const token = tokenOf(second);
      expect(token).not.toBe(first);
      expect(await store.extend(source, id, first, longLeaseMs)).toBe(false);
      expect(await store.extend(source, id, token, longLeaseMs)).toBe(true);
      await store.complete(source, id, token);
      expect(await store.begin(source, id, { leaseMs: longLeaseMs })).toEqual({
        status: 'processed',
      });
    },
  },
];
