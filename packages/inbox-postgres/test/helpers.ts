import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { createEnvelope, type Envelope } from '@onceflow/core';
import pg from 'pg';
import { createPostgresInbox, migrate, type PostgresInbox } from '../src/index.js';

export const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function createPool(max = 8): pg.Pool {
  const pool = new pg.Pool({ connectionString: PG_URL, max });
  pool.on('error', () => undefined); // idle-client errors are not under test
  return pool;
}

/** A schema name no other run uses. */
export const randomSchema = (): string => `onceflow_test_${randomBytes(6).toString('hex')}`;

/** A pool plus a fresh, migrated schema; disposing drops only that schema and ends the pool. */
export interface Fixture extends AsyncDisposable {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly store: PostgresInbox;
}

export async function fixture(
  options: { purgeBatchSize?: number; max?: number } = {},
): Promise<Fixture> {
  const pool = createPool(options.max);
  const schema = randomSchema();
  await migrate(pool, { schema });
  return {
    pool,
    schema,
    store: createPostgresInbox({ pool, schema, purgeBatchSize: options.purgeBatchSize }),
    async [Symbol.asyncDispose]() {
      await dropSchema(pool, schema);
      await pool.end();
    },
  };
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  if (!schema.startsWith('onceflow_test_')) throw new Error(`refusing to drop ${schema}`);
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

let seq = 0;
export function envelope(
  overrides: { id?: string; payload?: string; receivedAt?: Date } = {},
): Envelope {
  seq += 1;
  return createEnvelope({
    id: overrides.id ?? `evt_${seq}_${randomBytes(4).toString('hex')}`,
    source: 'stripe',
    type: 'charge.succeeded',
    key: 'cus_1',
    payload: overrides.payload ?? `{"n":${seq}}`,
    receivedAt: overrides.receivedAt,
  });
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Polls `check` until it returns true or the deadline passes. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits, on the database clock, until no lease in the fixture's inbox is live. */
export async function leasesEnded(fx: Fixture): Promise<void> {
  await waitUntil(async () => {
    const res = await fx.pool.query(
      `SELECT 1 FROM "${fx.schema}".onceflow_inbox
       WHERE lease_expires_at > now() OR proc_expires_at > now() LIMIT 1`,
    );
    return res.rowCount === 0;
  });
}
