import { randomBytes } from 'node:crypto';
import { defineHandler } from '@onceflow/core';
import {
  createPostgresInbox,
  markProcessed,
  migrate,
  withTransaction,
} from '@onceflow/inbox-postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { checkEffectivelyOnce, isEffectivelyOnceViolation } from '../src/index.js';
import { oneRowPerEvent, type Payment, payments } from './fixtures.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `onceflow_testing_${randomBytes(5).toString('hex')}`;
const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
pool.on('error', () => undefined);
const store = createPostgresInbox({ pool, schema });

beforeAll(async () => {
  await migrate(pool, { schema });
  await pool.query(`CREATE TABLE "${schema}".ledger (event_id text NOT NULL, amount int NOT NULL)`);
});

afterAll(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

/** Empties the inbox and the ledger before each run: the same table serves every history. */
async function emptyTables(): Promise<pg.Pool> {
  await pool.query(`TRUNCATE "${schema}".onceflow_inbox, "${schema}".ledger`);
  return pool;
}

async function rowsPerEvent(): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ event_id: string; n: number }>(
    `SELECT event_id, count(*)::int AS n FROM "${schema}".ledger GROUP BY event_id`,
  );
  return new Map(rows.map((r) => [r.event_id, r.n]));
}

const handler = (sameTransaction: boolean) =>
  defineHandler({
    type: 'payment',
    handle: async (event, ctx) => {
      const { amount } = event as Payment;
      const insert = (c: pg.PoolClient) =>
        c.query(`INSERT INTO "${schema}".ledger (event_id, amount) VALUES ($1, $2)`, [
          ctx.envelope.id,
          amount,
        ]);
      if (sameTransaction) {
        await withTransaction(pool, async (client) => {
          await markProcessed(client, ctx, { schema }); // throws → nothing is written
          await insert(client);
        });
        return;
      }
      await withTransaction(pool, insert);
      await withTransaction(pool, (client) => markProcessed(client, ctx, { schema }));
    },
  });

const options = {
  events: payments,
  setup: emptyTables,
  records: () => store,
  invariant: async () => oneRowPerEvent(await rowsPerEvent(), payments),
  numRuns: 40,
};

test('PostgreSQL: the row and markProcessed in one transaction pass', async () => {
  await checkEffectivelyOnce(handler(true), options);
});

test('PostgreSQL: the row and the mark in two transactions are caught', async () => {
  const err = await checkEffectivelyOnce(handler(false), { ...options, numRuns: 100 }).catch(
    (e: unknown) => e,
  );
  if (!isEffectivelyOnceViolation(err)) throw new Error(`expected a violation, got ${String(err)}`);
  expect(err.reason).toMatch(/ledger has 2 rows for evt_/);
  expect(err.message).toMatch(/lock expires mid-handler \(before-handler\)/);
});
