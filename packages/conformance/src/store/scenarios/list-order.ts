import type { EventRecord } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { waitUntil } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';
import { completed, deadLettered } from '../steps.js';

/** Where `records` first breaks page order (oldest `updatedAt` first, ties by source, then id), or -1. */
function firstOutOfOrder(records: readonly EventRecord[]): number {
  return records.findIndex((r, i) => {
    const prev = records[i - 1];
    if (prev === undefined) return false;
    const [ta, tb] = [Date.parse(prev.updatedAt), Date.parse(r.updatedAt)];
    if (ta !== tb) return ta > tb;
    return prev.source === r.source ? prev.id >= r.id : prev.source > r.source;
  });
}

/** The order of `list` and the exact bounds of its filters, which paging and operators rely on. */
export const listOrderScenarios: StoreScenario[] = [
  {
    name: 'list orders records by updatedAt, those changed in one millisecond by source then id, across sources',
    async run({ store, source }) {
      // One type marks this scenario's records in every source, so the list needs no source filter.
      const type = `${source}.order`;
      const sources = [`${source}-b`, `${source}-a`, `${source}-c`];
      const made = [];
      for (const id of ['z', 'm', 'a', 'q', 'b']) {
        for (const s of sources) {
          const env = testEnvelope({ source: s, id: `${id}-${s}`, type });
          made.push(env);
          await deadLettered(store, env);
        }
      }
      const first = made[0];
      if (first === undefined) throw new Error('no record made');
      const written = await store.list({ type, limit: 100 });
      const lastAt = Math.max(...written.records.map((r) => Date.parse(r.updatedAt)));
      await waitUntil(() => Date.now() > lastAt + 2, { timeoutMs: 1000, message: 'the clock' });
      // Changed last, the first record written moves to the end of the order.
      expect(await store.act(first.source, first.id, { kind: 'redriven', actor: 'ops' })).toBe(
        true,
      );
      const page = await store.list({ type, limit: 100 });
      expect(page.records, 'every source, without a source filter').toHaveLength(made.length);
      expect(firstOutOfOrder(page.records), 'oldest first, ties by (source, id)').toBe(-1);
      expect(page.records.at(-1)?.id, 'the record changed last comes last').toBe(first.id);
      expect(await store.count({ type })).toBe(made.length);
    },
  },
  {
    name: 'updatedBefore excludes a record changed at that very instant, updatedAfter includes it, and a reason filter skips records without a reason',
    async run({ store, envelope, source, record, longLeaseMs }) {
      const letter = envelope({ id: 'letter' });
      const done = envelope({ id: 'done' });
      await deadLettered(store, letter, 'attempts exhausted');
      await completed(store, done, longLeaseMs);
      const at = new Date((await record(letter)).updatedAt);
      const before = await store.list({
        source,
        state: 'dead-lettered',
        updatedBefore: at,
        limit: 10,
      });
      expect(before.records, 'updatedBefore is exclusive').toEqual([]);
      const after = await store.list({
        source,
        state: 'dead-lettered',
        updatedAfter: at,
        limit: 10,
      });
      expect(
        after.records.map((r) => r.id),
        'updatedAfter is inclusive',
      ).toEqual(['letter']);
      const reasons = await store.list({ source, reason: 'e', limit: 10 });
      expect(
        reasons.records.map((r) => r.id),
        'a completed record has no reason',
      ).toEqual(['letter']);
      expect(await store.count({ source, reason: 'e' })).toBe(1);
    },
  },
];
