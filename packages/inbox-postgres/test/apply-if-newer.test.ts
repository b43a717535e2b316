import { randomUUID } from 'node:crypto';
import {
  createWorker,
  defineHandler,
  defineTransitions,
  type HandlerContext,
} from '@onceflow/core';
import { createMemoryTransport } from '@onceflow/core/testing';
import fc from 'fast-check';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { applyIfNewer } from '../src/index.js';
import { envelope, type Fixture, fixture, waitUntil } from './helpers.js';

/** What each event carries: the order as it stood after it (event-carried state). */
interface OrderEvent {
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
      return { version: i + 1, status, amount };
    });
  });

/** Every event at least once, some several times, in any order. */
const deliveries = (events: readonly OrderEvent[], mode: 'once' | 'duplicated' | 'reordered') =>
  mode === 'once'
    ? fc.constant([...events])
    : fc.array(fc.constantFrom(...events), { maxLength: 8 }).chain((extra) => {
        const all = [...events, ...extra];
        if (mode === 'duplicated') return fc.constant(all);
        return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
      });

async function withOrders(): Promise<Fixture> {
  const fx = await fixture({ max: 6 });
  await fx.pool.query(
    `CREATE TABLE "${fx.schema}".orders (
      id text PRIMARY KEY, status text NOT NULL, amount int NOT NULL, version int NOT NULL)`,
  );
  return fx;
}

/** The handler's transaction: the guard, the transition check, the write. */
async function writeOrder(
  fx: Fixture,
  orderId: string,
  e: OrderEvent,
  ctx?: Pick<HandlerContext, 'note'>,
): Promise<'applied' | 'stale'> {
  const client = await fx.pool.connect();
  const location = { schema: fx.schema };
  try {
    await client.query('BEGIN');
    const position = { aggregate: `order:${orderId}`, version: e.version, ctx };
    const result = await applyIfNewer(client, position, location);
    if (result === 'applied') {
      const { rows } = await client.query(
        `SELECT status FROM "${fx.schema}".orders WHERE id = $1`,
        [orderId],
      );
      order.check((rows[0]?.status ?? 'pending') as 'pending', e.status);
      await client.query(
        `INSERT INTO "${fx.schema}".orders (id, status, amount, version) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET status = $2, amount = $3, version = $4`,
        [orderId, e.status, e.amount, e.version],
      );
    }
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

const orderRow = async (fx: Fixture, orderId: string) =>
  (
    await fx.pool.query(`SELECT status, amount, version FROM "${fx.schema}".orders WHERE id = $1`, [
      orderId,
    ])
  ).rows[0] as { status: string; amount: number; version: number } | undefined;

describe('applyIfNewer (PostgreSQL)', () => {
  for (const mode of ['once', 'duplicated', 'reordered'] as const) {
    it(`updated/approved sequences delivered ${mode} end in the newest state and never regress`, async () => {
      await using fx = await withOrders();
      await fc.assert(
        fc.asyncProperty(
          history.chain((events) => deliveries(events, mode).map((d) => ({ events, d }))),
          async ({ events, d }) => {
            const orderId = randomUUID(); // one aggregate per run, in this test's schema
            let newest = 0;
            for (const e of d) {
              const result = await writeOrder(fx, orderId, e);
              expect(result, `v${e.version} after v${newest}`).toBe(
                e.version > newest ? 'applied' : 'stale',
              );
              newest = Math.max(newest, e.version);
              const expected = events[newest - 1] as OrderEvent;
              expect(await orderRow(fx, orderId)).toEqual({
                status: expected.status,
                amount: expected.amount,
                version: newest,
              });
            }
            const last = events.at(-1) as OrderEvent;
            expect(await orderRow(fx, orderId)).toMatchObject({
              status: last.status,
              amount: last.amount,
            });
          },
        ),
        { numRuns: 40 },
      );
    }, 120_000);
  }

  it('concurrent transactions for one aggregate: each version applied at most once, the newest stands', async () => {
    await using fx = await withOrders();
    const orderId = randomUUID();
    const events = Array.from(
      { length: 12 },
      (_, i): OrderEvent => ({
        version: i + 1,
        status: i >= 6 ? 'approved' : 'pending',
        amount: i,
      }),
    );
    const shuffled = [...events, ...events].sort(() => Math.random() - 0.5);
    const results = await Promise.all(shuffled.map((e) => writeOrder(fx, orderId, e)));
    const appliedVersions = shuffled
      .filter((_, i) => results[i] === 'applied')
      .map((e) => e.version);
    expect(new Set(appliedVersions).size).toBe(appliedVersions.length);
    expect(appliedVersions).toContain(12);
    expect(await orderRow(fx, orderId)).toEqual({ status: 'approved', amount: 11, version: 12 });
  }, 60_000);

  it('occurredAt with an event-id tie-break; a rolled-back transaction moves nothing', async () => {
    await using fx = await withOrders();
    const location = { schema: fx.schema };
    const at = async (occurredAt: string, tieBreak: string, rollback = false) => {
      const client = await fx.pool.connect();
      try {
        await client.query('BEGIN');
        const r = await applyIfNewer(client, { aggregate: 'a', occurredAt, tieBreak }, location);
        await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
        return r;
      } finally {
        client.release();
      }
    };
    expect(await at('2026-01-01T00:00:09Z', 'evt_z', true)).toBe('applied');
    expect(await at('2026-01-01T00:00:01Z', 'evt_b')).toBe('applied');
    expect(await at('2026-01-01T00:00:00Z', 'evt_z')).toBe('stale');
    expect(await at('2026-01-01T00:00:01Z', 'evt_a')).toBe('stale');
    expect(await at('2026-01-01T00:00:01Z', 'evt_b')).toBe('stale');
    // Byte order, not the database's collation: 'B' (0x42) sorts before 'a' (0x61).
    expect(await at('2026-01-01T00:00:01Z', 'evt_B')).toBe('stale');
    expect(await at('2026-01-01T00:00:01Z', 'evt_c')).toBe('applied');
  });

  it('refuses a pool and a location without the table', async () => {
    await using fx = await withOrders();
    await expect(
      applyIfNewer(fx.pool as unknown as pg.ClientBase, { aggregate: 'a', version: 1 }),
    ).rejects.toMatchObject({ code: 'USAGE' });
    const client = await fx.pool.connect();
    try {
      await expect(
        applyIfNewer(client, { aggregate: 'a', version: 1 }, { schema: `${fx.schema}_none` }),
      ).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/no table/) });
    } finally {
      client.release();
    }
  });

  it('through the worker: a stale event is completed with the note; a regression goes to review', async () => {
    await using fx = await withOrders();
    const orderId = randomUUID();
    const transport = createMemoryTransport();
    const worker = createWorker({
      transport,
      records: fx.store,
      handlers: [
        defineHandler({
          type: 'charge.succeeded',
          async handle(e, ctx) {
            await writeOrder(fx, orderId, e as OrderEvent, ctx);
          },
        }),
      ],
    });
    await worker.start();
    const v = (version: number, status: OrderEvent['status']) => {
      const env = envelope({ payload: JSON.stringify({ version, status, amount: version }) });
      return env;
    };
    const recordIn = async (id: string, state: string) => {
      await waitUntil(async () => (await fx.store.get('stripe', id))?.state === state, 20_000);
      return (await fx.store.get('stripe', id))!;
    };
    const v2 = v(2, 'approved');
    await transport.publish([{ envelope: v2 }]);
    await recordIn(v2.id, 'completed');
    const v1 = v(1, 'pending');
    await transport.publish([{ envelope: v1 }]);
    const stale = await recordIn(v1.id, 'completed');
    expect(stale.history.at(-1)?.note).toBe(
      `stale: version 1 ≤ version 2 applied for order:${orderId}`,
    );
    const v3 = v(3, 'pending');
    await transport.publish([{ envelope: v3 }]);
    const review = await recordIn(v3.id, 'dead-lettered');
    expect(review).toMatchObject({ reason: 'review: approved → pending not allowed', attempts: 1 });
    const listed = await fx.store.list({ limit: 10, reason: 'review' });
    expect(listed.records.map((r) => r.id)).toEqual([v3.id]);
    expect(await orderRow(fx, orderId)).toEqual({ status: 'approved', amount: 2, version: 2 });
    await worker.close();
  }, 60_000);
});
