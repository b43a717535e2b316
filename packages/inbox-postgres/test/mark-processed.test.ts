import {
  AlreadyProcessedError,
  createWorker,
  defineHandler,
  type HandlerContext,
  LockLostError,
  UsageError,
} from '@onceflow/core';
import { createMemoryTransport } from '@onceflow/core/testing';
import { describe, expect, it } from 'vitest';
import { type InboxLocation, markProcessed, migrate } from '../src/index.js';
import { dropSchema, envelope, type Fixture, fixture, randomSchema, waitUntil } from './helpers.js';

type LeaseHolder = Pick<HandlerContext, 'envelope' | 'processingToken'>;
type MarkTarget = LeaseHolder | { readonly source: string; readonly id: string };

/** The recipe: mark first, then the business write, in one transaction; returns what it threw. */
async function recordPayment(
  fx: Fixture,
  target: MarkTarget,
  location: InboxLocation = { schema: fx.schema },
): Promise<unknown> {
  const client = await fx.pool.connect();
  try {
    await client.query('BEGIN');
    if ('envelope' in target) await markProcessed(client, target, location);
    else await markProcessed(client, target, location);
    await client.query(`INSERT INTO "${fx.schema}".ledger (event_id, amount) VALUES ($1, 42)`, [
      'envelope' in target ? target.envelope.id : target.id,
    ]);
    await client.query('COMMIT');
    return undefined;
  } catch (err) {
    await client.query('ROLLBACK');
    return err;
  } finally {
    client.release();
  }
}

async function withLedger(): Promise<Fixture> {
  const fx = await fixture({ max: 4 });
  await fx.pool.query(
    `CREATE TABLE "${fx.schema}".ledger (event_id text NOT NULL, amount int NOT NULL)`,
  );
  return fx;
}

const ledgerRows = async (fx: Fixture) =>
  (await fx.pool.query(`SELECT event_id FROM "${fx.schema}".ledger`)).rows.length;

/** A context holding a real processing lease, as the worker builds it. */
async function leased(fx: Fixture, id: string, leaseMs = 60_000) {
  const env = envelope({ id });
  const begun = await fx.store.begin(env, { leaseMs, attempt: 1 });
  if (begun.status !== 'acquired') throw new Error(`${id}: ${begun.status}`);
  return { envelope: env, processingToken: begun.token } satisfies LeaseHolder;
}

describe('markProcessed(client, ctx): the mark holds while this attempt owns the lease', () => {
  it('inside a worker handler: one ledger row, the event processed, a redelivery a duplicate', async () => {
    await using fx = await withLedger();
    await using transport = createMemoryTransport();
    const seen: number[] = [];
    const worker = createWorker({
      transport,
      records: fx.store,
      handlers: [
        defineHandler({
          type: 'charge.succeeded',
          async handle(_event, ctx) {
            seen.push(ctx.attempt);
            const err = await recordPayment(fx, ctx);
            if (err) throw err;
          },
        }),
      ],
    });
    await worker.start();
    const env = envelope({ id: 'evt_ctx' });
    await transport.publish([{ envelope: env }]);
    await waitUntil(async () => (await fx.store.stats()).processed === 1);
    await transport.publish([{ envelope: env, dedupeKey: 'again' }]);
    await waitUntil(async () => transport.broker.depth(transport.queue) === 0);
    await worker.close();
    expect(await fx.store.count({ state: 'dead-lettered' })).toBe(0);
    expect(seen).toEqual([1]);
    expect(await ledgerRows(fx)).toBe(1);
    expect(await fx.store.begin(env, { leaseMs: 1000, attempt: 2 })).toEqual({
      status: 'processed',
    });
    const record = await fx.store.get(env.source, env.id);
    expect(record?.history.map((h) => h.state)).toEqual(['processing', 'completed']);
    expect(record?.history.at(-1)?.note).toBe("marked in the handler's transaction");
  });

  it('another attempt completed the event first: AlreadyProcessedError, nothing written', async () => {
    await using fx = await withLedger();
    const ctx = await leased(fx, 'evt_done', 1);
    await new Promise((r) => setTimeout(r, 5));
    const other = await leased(fx, 'evt_done');
    await fx.store.complete('stripe', 'evt_done', other.processingToken);
    expect(await recordPayment(fx, ctx)).toBeInstanceOf(AlreadyProcessedError);
    expect(await ledgerRows(fx)).toBe(0);
  });

  it('another attempt took the expired lease: LockLostError for the late one, the holder marks', async () => {
    await using fx = await withLedger();
    const late = await leased(fx, 'evt_race', 1);
    await new Promise((r) => setTimeout(r, 5));
    const holder = await leased(fx, 'evt_race');
    const err = await recordPayment(fx, late);
    expect(err).toBeInstanceOf(LockLostError);
    expect((err as Error).message).toMatch(/lost to another attempt/);
    expect(await recordPayment(fx, holder)).toBeUndefined();
    expect(await recordPayment(fx, late)).toBeInstanceOf(AlreadyProcessedError);
    expect(await ledgerRows(fx)).toBe(1);
  });
});

describe('misuse is a UsageError (dead-lettered at once), never a retried StoreUnavailableError', () => {
  it('a worker handler that leaves out the schema: dead-lettered on attempt 1 with what to do', async () => {
    await using fx = await withLedger();
    await using transport = createMemoryTransport();
    const worker = createWorker({
      transport,
      records: fx.store,
      handlers: [
        defineHandler({
          type: 'charge.succeeded',
          async handle(_event, ctx) {
            const err = await recordPayment(fx, ctx, { schema: randomSchema() });
            if (err) throw err;
          },
        }),
      ],
    });
    await worker.start();
    await transport.publish([{ envelope: envelope({ id: 'evt_noschema' }) }]);
    const letters = { state: 'dead-lettered' } as const;
    await waitUntil(async () => (await fx.store.count(letters)) === 1);
    await worker.close();
    const [dead] = (await fx.store.list({ ...letters, limit: 10 })).records;
    expect(dead?.attempts).toBe(1);
    expect(dead?.lastError?.code).toBe('USAGE');
    expect(dead?.reason).toMatch(/^markProcessed: no inbox table ".+"\."onceflow_inbox": pass the/);
    expect(await ledgerRows(fx)).toBe(0);
  });

  it('ctx with a location whose table exists but never saw the event (another schema)', async () => {
    await using fx = await withLedger();
    const elsewhere = randomSchema();
    await migrate(fx.pool, { schema: elsewhere });
    try {
      const err = await recordPayment(fx, await leased(fx, 'evt_1'), { schema: elsewhere });
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(
        `markProcessed: no processing lease for stripe/evt_1 in "${elsewhere}"."onceflow_inbox": pass the { schema, table } the store was created with, and give the worker this store as its records`,
      );
    } finally {
      await dropSchema(fx.pool, elsewhere);
    }
    expect(await ledgerRows(fx)).toBe(0);
  });

  it('(source, id) from the payload instead of ctx.envelope: undefined or empty', async () => {
    await using fx = await withLedger();
    const payload = { id: 'evt_1', type: 'charge.succeeded' } as { id: string; source?: string };
    const noSource = await recordPayment(fx, payload as { source: string; id: string });
    expect(noSource).toBeInstanceOf(UsageError);
    expect((noSource as Error).message).toMatch(
      /^markProcessed: event\.source must be a non-empty string, got undefined: pass the handler's ctx/,
    );
    expect(await recordPayment(fx, { source: 'stripe', id: '' })).toBeInstanceOf(UsageError);
    expect(await ledgerRows(fx)).toBe(0);
  });

  it('a ctx without a processing lease', async () => {
    await using fx = await withLedger();
    const err = await recordPayment(fx, { envelope: envelope(), processingToken: '' });
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/ctx holds no processing lease/);
  });
});
