import type { Pool, PoolClient } from 'pg';
import { toStoreError } from './store-error.js';

/**
 * Runs `work` in a transaction on a client of `pool`: `BEGIN`, `work(client)`, `COMMIT`, or
 * `ROLLBACK` and the error rethrown. While the client is out of the pool it listens for the
 * client's `error` event: pg emits one when the server ends the connection (a restart, a
 * terminated backend, a network cut), and a checked-out client with no listener turns it into an
 * uncaught exception that ends the process. Here the query in flight rejects instead, and the
 * broken client is destroyed on release rather than handed to the next caller. A failure to
 * connect, begin or commit is a `StoreUnavailableError` (the worker retries); what `work` throws
 * passes through unchanged.
 *
 * @example
 * handle: (event, ctx) =>
 *   withTransaction(pool, async (client) => {
 *     await markProcessed(client, ctx, { schema: 'onceflow' }); // throws → nothing is written
 *     await client.query('INSERT INTO ledger (account, amount) VALUES ($1, $2)', [acct, amount]);
 *   }),
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toStoreError(err, 'connect');
  }
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN').catch((err: unknown) => {
      throw toStoreError(err, 'begin');
    });
    let result: T;
    try {
      result = await work(client);
    } catch (err) {
      if (!broken) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    }
    await client.query('COMMIT').catch((err: unknown) => {
      throw toStoreError(err, 'commit');
    });
    return result;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
