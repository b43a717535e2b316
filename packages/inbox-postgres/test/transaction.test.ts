import { StoreUnavailableError } from '@onceflow/core';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/index.js';
import { PG_URL } from './helpers.js';

const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
pool.on('error', () => {});
afterAll(() => pool.end());

describe('withTransaction', () => {
  it('PostgreSQL ending the connection under a handler transaction does not crash the process', async () => {
    // The cause: a client out of the pool has no `error` listener of pg-pool's, so the `error`
    // event pg emits when the server ends its connection is an uncaught exception.
    const bare = await pool.connect();
    expect(bare.listenerCount('error')).toBe(0);
    bare.release();

    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const failed = await withTransaction(pool, async (client) => {
        await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
      }).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(Error);
      await new Promise((r) => setTimeout(r, 100)); // pg emits `error` and `end` on later ticks
      expect(uncaught).toEqual([]);
      // The broken client was destroyed, not handed to the next caller.
      expect(
        await withTransaction(pool, async (c) => (await c.query('SELECT 1 AS one')).rows),
      ).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('commits what work wrote, rolls back and rethrows what it threw unchanged', async () => {
    const table = `tx_${Date.now().toString(36)}`;
    await pool.query(`CREATE TABLE ${table} (n int)`);
    try {
      await withTransaction(pool, (c) => c.query(`INSERT INTO ${table} VALUES (1)`));
      const boom = new Error('boom');
      const thrown = await withTransaction(pool, async (c) => {
        await c.query(`INSERT INTO ${table} VALUES (2)`);
        throw boom;
      }).catch((err: unknown) => err);
      expect(thrown).toBe(boom);
      expect((await pool.query(`SELECT n FROM ${table}`)).rows).toEqual([{ n: 1 }]);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });

  it('a PostgreSQL that cannot be reached is StoreUnavailableError', async () => {
    const down = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    await expect(withTransaction(down, async () => 1)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    await down.end();
  });
});
