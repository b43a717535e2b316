import { AlreadyProcessedError } from '@onceflow/core';
import type { ClientBase } from 'pg';
import { type InboxLocation, resolveLocation } from './config.js';
import { exec } from './exec.js';
import { inboxNames } from './names.js';
import type { Statement } from './statements.js';

const cache = new Map<string, Statement>();

function statementFor(location: InboxLocation): Statement {
  const { schema, table } = resolveLocation(location);
  const key = `${schema}.${table}`;
  let statement = cache.get(key);
  if (statement === undefined) {
    const n = inboxNames(schema, table);
    statement = {
      name: `onceflow_mark_${n.key}`,
      text: `INSERT INTO ${n.qualified} AS t (source, id, state, received_at, processed_at)
        VALUES ($1, $2, 'processed', now(), now())
        ON CONFLICT (source, id) DO UPDATE
          SET state = 'processed', processed_at = now(), proc_token = NULL, proc_expires_at = NULL,
              lease_token = NULL, lease_expires_at = NULL
          WHERE t.state <> 'processed'
        RETURNING 1`,
    };
    cache.set(key, statement);
  }
  return statement;
}

/**
 * Marks an event processed inside the caller's open transaction, so the business write and the
 * mark commit or roll back together. Throws `AlreadyProcessedError` when the event is already
 * processed (roll back, then ack: the other attempt's effects stand).
 *
 * Concurrency: the mark takes the row lock, so a concurrent attempt's mark waits until this
 * transaction ends, then throws if it committed (or proceeds if it rolled back). Call it first in
 * the transaction so a losing attempt stops before doing its business work. Under REPEATABLE READ
 * or SERIALIZABLE the loser gets a serialization failure instead (wrapped in
 * `StoreUnavailableError`): roll back and let the worker retry. pg failures surface as
 * `StoreUnavailableError` with the cause.
 *
 * @example
 * const client = await pool.connect();
 * try {
 *   await client.query('BEGIN');
 *   await markProcessed(client, { source: event.source, id: event.id });
 *   await client.query('INSERT INTO ledger (account, amount) VALUES ($1, $2)', [acct, amount]);
 *   await client.query('COMMIT');
 * } catch (err) {
 *   await client.query('ROLLBACK');
 *   if (!(err instanceof AlreadyProcessedError)) throw err; // processed before: nothing to do
 * } finally {
 *   client.release();
 * }
 */
export async function markProcessed(
  client: ClientBase,
  event: { readonly source: string; readonly id: string },
  location: InboxLocation = {},
): Promise<void> {
  const res = await exec(client, statementFor(location), [event.source, event.id], 'markProcessed');
  if (res.rowCount !== 1) throw new AlreadyProcessedError(event.source, event.id);
}
