import { AlreadyProcessedError, ConfigError } from '@onceflow/core';
import type { Database, Statement } from 'better-sqlite3';

/**
 * Sets `processed_at` on the event's row, creating the row if the event never passed an inbox.
 * Changes nothing (0 rows) when the event was already processed.
 */
export const MARK_PROCESSED_SQL = `
  INSERT INTO onceflow_inbox (source, id, received_at, processed_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (source, id) DO UPDATE SET processed_at = excluded.processed_at,
    processing_token = NULL, processing_expires_at = NULL
  WHERE processed_at IS NULL`;

const cache = new WeakMap<Database, Statement>();

function statement(db: Database): Statement {
  let s = cache.get(db);
  if (!s) {
    try {
      s = db.prepare(MARK_PROCESSED_SQL);
    } catch (err) {
      throw new ConfigError(
        `markProcessedInTransaction: the database has no onceflow tables (${(err as Error).message}); open it with createEmbedded().start() or applyMigrations(db) first`,
      );
    }
    cache.set(db, s);
  }
  return s;
}

/**
 * Marks (source, id) processed inside the caller's better-sqlite3 transaction, so the business
 * write and the processed mark commit or roll back together: effectively-once for writes to the
 * same SQLite file. Throws `AlreadyProcessedError` when another attempt already completed the event;
 * let it propagate so the transaction rolls back (the worker then acks without a second effect).
 * Throws `ConfigError` when called outside a transaction.
 *
 * `db` is any connection to the embedded file: `embedded.db` or one you opened yourself. Run the
 * transaction with `.immediate()` (it takes the write lock up front and waits up to busy_timeout
 * for it): a deferred transaction that read before its first write fails with `SQLITE_BUSY` when
 * another process wrote in between. Mark first, so a losing attempt stops before its business work.
 *
 * @example
 * const recordPayment = embedded.db.transaction((event: Envelope, amount: number) => {
 *   markProcessedInTransaction(embedded.db, event.source, event.id); // throws → nothing is written
 *   embedded.db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run(event.id, amount);
 * });
 * recordPayment.immediate(event, 42);
 */
export function markProcessedInTransaction(db: Database, source: string, id: string): void {
  if (!db.inTransaction) {
    throw new ConfigError('markProcessedInTransaction must run inside a transaction on the db');
  }
  const now = Date.now();
  if (statement(db).run(source, id, now, now).changes === 0) {
    throw new AlreadyProcessedError(source, id);
  }
}
