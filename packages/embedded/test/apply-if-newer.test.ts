import {
  createWorker,
  defineHandler,
  defineTransitions,
  type HandlerContext,
} from '@onceflow/core';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyIfNewer, applyMigrations, createEmbedded } from '../src/index.js';
import { event, tempDbPath, waitFor } from './helpers.js';

/** What each event carries: the order as it stood after it (event-carried state). */
interface OrderEvent {
  readonly id: string;
  readonly kind: 'updated' | 'approved';
  readonly version: number;
  readonly status: 'pending' | 'approved';
  readonly amount: number;
}

const order = defineTransitions({ pending: ['approved', 'rejected'], approved: ['shipped'] });

/** A history of 1–8 `updated`/`approved` events, versions 1..n, each with the state after it. */
const history = fc
  .array(fc.oneof(fc.constant<'approved'>('approved'), fc.nat(1000)), {
    minLength: 1,
    maxLength: 8,
  })
  .map((steps) => {
    let status: OrderEvent['status'] = 'pending';
    let amount = 0;
    return steps.map((step, i): OrderEvent => {
      if (step === 'approved') status = 'approved';
      else amount = step;
      const kind = step === 'approved' ? 'approved' : 'updated';
      return { id: `evt_${i + 1}`, kind, version: i + 1, status, amount };
    });
  });

/** Every event at least once, some several times, in any order. */
const deliveries = (events: readonly OrderEvent[], mode: 'once' | 'duplicated' | 'reordered') =>
  mode === 'once'
    ? fc.constant([...events])
    : fc.array(fc.constantFrom(...events), { maxLength: 8 }).chain((extra) => {
        const all = [...events, ...extra];
        if (mode === 'duplicated') return fc.constant([...events, ...extra]);
        return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
      });

const ORDERS = `CREATE TABLE orders (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, amount INTEGER NOT NULL, version INTEGER NOT NULL)`;

/** The handler's transaction: the guard, the transition check, the write. */
function orderWriter(db: Database.Database) {
  return db.transaction((e: OrderEvent, ctx?: Pick<HandlerContext, 'note'>) => {
    const aggregate = 'order:1';
    if (applyIfNewer(db, { aggregate, version: e.version, ctx }) === 'stale') return 'stale';
    const current = db.prepare('SELECT status FROM orders WHERE id = ?').get('1') as
      | { status: string }
      | undefined;
    order.check((current?.status ?? 'pending') as 'pending', e.status);
    db.prepare(
      `INSERT INTO orders (id, status, amount, version) VALUES ('1', @status, @amount, @version)
       ON CONFLICT (id) DO UPDATE SET status = @status, amount = @amount, version = @version`,
    ).run({ status: e.status, amount: e.amount, version: e.version });
    return 'applied';
  });
}

describe('applyIfNewer (SQLite)', () => {
  for (const mode of ['once', 'duplicated', 'reordered'] as const) {
    it(`updated/approved sequences delivered ${mode} end in the newest state and never regress`, () => {
      fc.assert(
        fc.property(
          history.chain((events) => deliveries(events, mode).map((d) => ({ events, d }))),
          ({ events, d }) => {
            const db = new Database(':memory:');
            try {
              applyMigrations(db);
              db.exec(ORDERS);
              const write = orderWriter(db);
              let newest = 0;
              for (const e of d) {
                const result = write.immediate(e);
                expect(result, `v${e.version} after v${newest}`).toBe(
                  e.version > newest ? 'applied' : 'stale',
                );
                newest = Math.max(newest, e.version);
                const row = db.prepare('SELECT status, amount, version FROM orders').get();
                const expected = events[newest - 1] as OrderEvent;
                expect(row).toEqual({
                  status: expected.status,
                  amount: expected.amount,
                  version: newest,
                });
              }
              const last = events.at(-1) as OrderEvent;
              expect(db.prepare('SELECT status, amount FROM orders').get()).toEqual({
                status: last.status,
                amount: last.amount,
              });
            } finally {
              db.close();
            }
          },
        ),
        { numRuns: 150 },
      );
    });
  }

  it('occurredAt with an event-id tie-break: later wins, equal times go to the greater id', () => {
    const db = new Database(':memory:');
    applyMigrations(db);
    const at = (occurredAt: string, tieBreak: string) =>
      db.transaction(() => applyIfNewer(db, { aggregate: 'a', occurredAt, tieBreak })).immediate();
    expect(at('2026-01-01T00:00:01Z', 'evt_b')).toBe('applied');
    expect(at('2026-01-01T00:00:00Z', 'evt_z')).toBe('stale');
    expect(at('2026-01-01T00:00:01Z', 'evt_a')).toBe('stale');
    expect(at('2026-01-01T00:00:01Z', 'evt_b')).toBe('stale');
    expect(at('2026-01-01T00:00:01Z', 'evt_c')).toBe('applied');
    db.close();
  });

  it('a rolled-back transaction leaves the position where it was', () => {
    const db = new Database(':memory:');
    applyMigrations(db);
    const failing = db.transaction(() => {
      applyIfNewer(db, { aggregate: 'a', version: 9 });
      throw new Error('business write failed');
    });
    expect(() => failing.immediate()).toThrow('business write failed');
    const ok = db.transaction(() => applyIfNewer(db, { aggregate: 'a', version: 1 }));
    expect(ok.immediate()).toBe('applied');
    db.close();
  });

  it('refuses a call outside a transaction, or on a file without the onceflow tables', () => {
    const db = new Database(':memory:');
    expect(() => applyIfNewer(db, { aggregate: 'a', version: 1 })).toThrow(
      expect.objectContaining({ code: 'USAGE' }),
    );
    expect(() =>
      db.transaction(() => applyIfNewer(db, { aggregate: 'a', version: 1 })).immediate(),
    ).toThrow(/no onceflow_versions table/);
    db.close();
  });

  it('through the worker: a stale event is completed with the note; a regression goes to review', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
    const db = embedded.db;
    db.exec(ORDERS);
    const write = orderWriter(db);
    const transport = embedded.transport('orders');
    const worker = createWorker({
      transport,
      records: embedded.records,
      handlers: [
        defineHandler({
          type: 'test.event',
          async handle(e, ctx) {
            write.immediate(e as OrderEvent, ctx);
          },
        }),
      ],
    });
    await worker.start();
    const v = (id: string, version: number, status: OrderEvent['status']) =>
      event(id, { payload: { id, kind: 'updated', version, status, amount: version } });
    await transport.publish([{ envelope: v('evt_2', 2, 'approved') }]);
    await waitFor(async () => (await embedded.records.get('test', 'evt_2'))?.state === 'completed');
    await transport.publish([{ envelope: v('evt_1', 1, 'pending') }]);
    const stale = await waitFor(async () => {
      const r = await embedded.records.get('test', 'evt_1');
      return r?.state === 'completed' ? r : undefined;
    });
    expect(stale.history.at(-1)?.note).toBe('stale: version 1 ≤ version 2 applied for order:1');
    expect((await embedded.records.get('test', 'evt_2'))?.history.at(-1)?.note).toBe(undefined);

    // Without the guard's help (a newer version asking for an older status): review.
    await transport.publish([{ envelope: v('evt_3', 3, 'pending') }]);
    const review = await waitFor(async () => {
      const r = await embedded.records.get('test', 'evt_3');
      return r?.state === 'dead-lettered' ? r : undefined;
    });
    expect(review).toMatchObject({ reason: 'review: approved → pending not allowed', attempts: 1 });
    const listed = await embedded.records.list({ limit: 10, reason: 'review' });
    expect(listed.records.map((r) => r.id)).toEqual(['evt_3']);
    expect(db.prepare('SELECT status, version FROM orders').get()).toEqual({
      status: 'approved',
      version: 2,
    });
    await worker.close();
  });
});
