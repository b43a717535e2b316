import {
  AlreadyProcessedError,
  type HandlerContext,
  LockLostError,
  UsageError,
} from '@onceflow/core';
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

/** The mark while `processing_token` is the caller's lease; 0 rows otherwise. */
const MARK_BY_LEASE_SQL = `
  UPDATE onceflow_inbox SET processed_at = ?, processing_token = NULL, processing_expires_at = NULL
  WHERE source = ? AND id = ? AND processing_token = ? AND processed_at IS NULL`;

/** Why the mark by lease changed nothing. */
const INSPECT_SQL = `SELECT processed_at FROM onceflow_inbox WHERE source = ? AND id = ?`;

/** What the mark reads from the handler's context: the event and the worker's processing lease. */
type LeaseHolder = Pick<HandlerContext, 'envelope' | 'processingToken'>;

interface MarkStatements {
  readonly upsert: Statement;
  readonly byLease: Statement;
  readonly inspect: Statement;
}

const cache = new WeakMap<Database, MarkStatements>();

function statements(db: Database): MarkStatements {
  let s = cache.get(db);
  if (!s) {
    try {
      s = {
        upsert: db.prepare(MARK_PROCESSED_SQL),
        byLease: db.prepare(MARK_BY_LEASE_SQL),
        inspect: db.prepare(INSPECT_SQL),
      };
    } catch (err) {
      throw new UsageError(
        `markProcessedInTransaction: the database has no onceflow tables (${(err as Error).message}): pass the embedded store's db (embedded.db), or open the file with createEmbedded().start() or applyMigrations(db) first`,
      );
    }
    cache.set(db, s);
  }
  return s;
}

function checkEvent(source: unknown, id: unknown): void {
  for (const [field, value] of [
    ['source', source],
    ['id', id],
  ] as const) {
    if (typeof value !== 'string' || value === '') {
      throw new UsageError(
        `markProcessedInTransaction: ${field} must be a non-empty string, got ${JSON.stringify(value) ?? 'undefined'}: pass the handler's ctx (or ctx.envelope.${field}), not a field of the payload`,
      );
    }
  }
}

function markByLease(s: MarkStatements, ctx: LeaseHolder): void {
  const { source, id } = ctx.envelope;
  if (ctx.processingToken === '') {
    throw new UsageError(
      `markProcessedInTransaction: ctx holds no processing lease for ${source}/${id}: pass the ctx the worker gave the handler`,
    );
  }
  if (s.byLease.run(Date.now(), source, id, ctx.processingToken).changes === 1) return;
  const row = s.inspect.get(source, id) as { processed_at: number | null } | undefined;
  if (row === undefined) {
    throw new UsageError(
      `markProcessedInTransaction: no processing lease for ${source}/${id} in this database: pass the db of the embedded store the worker uses as its processed store`,
    );
  }
  if (row.processed_at !== null) throw new AlreadyProcessedError(source, id);
  // Another attempt took the lease after this one's expired (or took it and released it). The
  // hint covers the one misuse that looks the same: a worker whose processed store is elsewhere.
  throw new LockLostError(
    `processing lease on ${source}/${id} lost to another attempt (if the worker's processed store is not this database, pass source and id instead of ctx)`,
  );
}

/**
 * Marks an event processed inside the caller's better-sqlite3 transaction, so the business write
 * and the processed mark commit or roll back together: effectively-once for writes to the same
 * SQLite file. Mark first, so a losing attempt stops before its business work, and let what it
 * throws propagate so the transaction rolls back.
 *
 * Pass the handler's `ctx` (the worker's processed store being this file): the mark then holds
 * only while this attempt owns the processing lease. It throws
 * - `AlreadyProcessedError` when another attempt completed the event (the worker acks it as a
 *   duplicate, without a second effect);
 * - `LockLostError` when another attempt took the processing lease (the worker retries);
 * - `UsageError` for a call that can never work: outside a transaction, on a file without the
 *   onceflow tables, or on one where the event has no row (another file); the worker
 *   dead-letters it at once with the message as reason.
 *
 * Passing `(db, source, id)` instead marks by id alone, creating the row when missing, for a
 * worker whose processed store is elsewhere; a `source` or `id` that is not a non-empty string
 * is a `UsageError`.
 *
 * `db` is any connection to the embedded file: `embedded.db` or one you opened yourself. Run the
 * transaction with `.immediate()` (it takes the write lock up front and waits up to busy_timeout
 * for it): a deferred transaction that read before its first write fails with `SQLITE_BUSY` when
 * another process wrote in between.
 *
 * @example
 * const recordPayment = embedded.db.transaction((ctx: HandlerContext, amount: number) => {
 *   markProcessedInTransaction(embedded.db, ctx); // throws → nothing is written
 *   embedded.db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)')
 *     .run(ctx.envelope.id, amount);
 * });
 * recordPayment.immediate(ctx, 42); // in the handler
 */
export function markProcessedInTransaction(
  db: Database,
  ctx: Pick<HandlerContext, 'envelope' | 'processingToken'>,
): void;
/** Marks by (source, id) alone, creating the row when missing; see the `ctx` form above. */
export function markProcessedInTransaction(db: Database, source: string, id: string): void;
export function markProcessedInTransaction(
  db: Database,
  target: LeaseHolder | string,
  id?: string,
): void {
  if (!db.inTransaction) {
    throw new UsageError(
      'markProcessedInTransaction must run inside a transaction on the db: call it in db.transaction(...).immediate()',
    );
  }
  const s = statements(db);
  if (typeof target === 'object' && target !== null) {
    markByLease(s, target);
    return;
  }
  checkEvent(target, id);
  const source = target as string;
  const now = Date.now();
  if (s.upsert.run(source, id, now, now).changes === 0) {
    throw new AlreadyProcessedError(source, id as string);
  }
}
