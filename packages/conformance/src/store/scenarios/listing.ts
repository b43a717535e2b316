import type { EventRecord, RecordFilter, RecordPage } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { waitUntil } from '../../wait.js';
import type { ConformanceStore, StoreScenario } from '../scenario.js';
import { completed, deadLettered } from '../steps.js';

const ids = (records: readonly { readonly id: string }[]) => records.map((r) => r.id).sort();

/** Page order: oldest `updatedAt` first, ties by (source, id). */
function inPageOrder(a: EventRecord, b: EventRecord): boolean {
  const ta = Date.parse(a.updatedAt);
  const tb = Date.parse(b.updatedAt);
  if (ta !== tb) return ta < tb;
  return a.source === b.source ? a.id < b.id : a.source < b.source;
}

/** What `list` finds for `filter`, by id; `count` must agree. */
async function found(store: ConformanceStore, filter: RecordFilter): Promise<string[]> {
  const page = await store.list({ ...filter, limit: 100 });
  expect(page.next, 'one page holds them all').toBe(undefined);
  expect(await store.count(filter), `count of ${JSON.stringify(filter)}`).toBe(page.records.length);
  return ids(page.records);
}

/** Every page of `filter`, `limit` at a time, following `next` (at most 10 pages). */
async function allPages(store: ConformanceStore, filter: RecordFilter, limit: number) {
  const pages: RecordPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...filter, limit, cursor });
    pages.push(page);
    cursor = page.next;
  } while (cursor !== undefined && pages.length < 10);
  return pages;
}

/** A refusal with `UsageError`, whether the store throws or rejects. */
async function refused(call: () => Promise<unknown>, what: string): Promise<void> {
  await expect(Promise.resolve().then(call), what).rejects.toMatchObject({ code: 'USAGE' });
}

/** Browsing records is a store API: filters, counts and cursor paging. */
export const listingScenarios: StoreScenario[] = [
  {
    name: 'list pages 25 dead letters 10 at a time as 10, 10, 5, oldest first, without duplicates or gaps',
    async run({ store, envelope, source, longLeaseMs }) {
      const letters = Array.from({ length: 25 }, (_, i) =>
        envelope({ id: `dl-${String(i).padStart(2, '0')}` }),
      );
      for (const env of letters) await deadLettered(store, env);
      await completed(store, envelope(), longLeaseMs); // not a dead letter: not listed
      const pages = await allPages(store, { source, state: 'dead-lettered' }, 10);
      expect(pages.map((p) => p.records.length)).toEqual([10, 10, 5]);
      expect(pages.at(-1)?.next, 'no next on the last page').toBe(undefined);
      const listed = pages.flatMap((p) => p.records);
      expect(ids(listed)).toEqual(ids(letters));
      const unordered = listed.findIndex((r, i) => i > 0 && !inPageOrder(listed[i - 1] ?? r, r));
      expect(unordered, 'oldest updatedAt first, ties by (source, id)').toBe(-1);
      expect(await store.count({ source, state: 'dead-lettered' })).toBe(25);
      const full = await allPages(store, { source, state: 'dead-lettered' }, 5);
      expect(
        full.map((p) => p.records.length),
        'a full last page has no next',
      ).toEqual([5, 5, 5, 5, 5]);
    },
  },
  {
    name: 'list and count filter by state, source, type, reason substring and age',
    async run({ store, envelope, source, longLeaseMs }) {
      const other = `${source}-other`;
      const schema = envelope({ id: 'a-schema', type: 'order.paid' });
      const refund = envelope({ id: 'a-refund', type: 'order.refunded' });
      const paid = envelope({ id: 'a-paid', type: 'order.paid' });
      const elsewhere = testEnvelope({ source: other, id: 'b-late', type: 'order.paid' });
      const late = envelope({ id: 'a-late', type: 'order.paid' });
      await deadLettered(store, schema, 'schema: amount must be a number');
      await deadLettered(store, refund, 'attempts exhausted');
      await completed(store, paid, longLeaseMs);
      await deadLettered(store, elsewhere, 'attempts exhausted');
      const early = await Promise.all(
        [schema, refund, paid].map(async (e) =>
          Date.parse((await store.get(source, e.id))?.updatedAt ?? ''),
        ),
      );
      const boundary = Math.max(...early) + 1;
      await waitUntil(() => Date.now() > boundary + 5, { timeoutMs: 1000, message: 'the clock' });
      await deadLettered(store, late, 'attempts exhausted');
      const lateAt = Date.parse((await store.get(source, late.id))?.updatedAt ?? '');
      expect(lateAt, 'the late record changed after the boundary').toBeGreaterThanOrEqual(boundary);

      expect(await found(store, { source })).toEqual(['a-late', 'a-paid', 'a-refund', 'a-schema']);
      expect(await found(store, { source: other })).toEqual(['b-late']);
      expect(await found(store, { source, state: 'dead-lettered' })).toEqual([
        'a-late',
        'a-refund',
        'a-schema',
      ]);
      expect(await found(store, { source, state: 'completed' })).toEqual(['a-paid']);
      expect(await found(store, { source, type: 'order.paid' })).toEqual([
        'a-late',
        'a-paid',
        'a-schema',
      ]);
      expect(await found(store, { source, reason: 'amount' })).toEqual(['a-schema']);
      expect(await found(store, { source, reason: 'exhausted', type: 'order.paid' })).toEqual([
        'a-late',
      ]);
      const at = new Date(boundary);
      expect(await found(store, { source, updatedBefore: at })).toEqual([
        'a-paid',
        'a-refund',
        'a-schema',
      ]);
      expect(await found(store, { source, updatedAfter: at })).toEqual(['a-late']);
      expect(await found(store, { source, updatedAfter: at, reason: 'amount' })).toEqual([]);
    },
  },
  {
    name: 'list refuses an invalid cursor and a page size outside 1 to 1000 with a UsageError',
    async run({ store, envelope, source }) {
      await deadLettered(store, envelope());
      await refused(() => store.list({ source, limit: 10, cursor: 'not-a-cursor' }), 'cursor');
      await refused(() => store.list({ source, limit: 0 }), 'limit 0');
      await refused(() => store.list({ source, limit: 1001 }), 'limit 1001');
      expect((await store.list({ source, limit: 1 })).records).toHaveLength(1);
      expect((await store.list({ source, limit: 1000 })).records).toHaveLength(1);
    },
  },
];
