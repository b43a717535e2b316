import {
  AlreadyProcessedError,
  type HandlerContext,
  LockLostError,
  UsageError,
} from '@onceflow/core';
import type { Database, Statement } from 'better-sqlite3';
import { appendHistory, entryJson, withAttempt } from './history.js';

/** What the mark writes besides the state: the lease is given up, the history says completed. */
const COMPLETED = `state = 'completed', processing_token = NULL, processing_expires_at = NULL,
  next_attempt_at = NULL, updated_at = @now, history = ${appendHistory(withAttempt('@entry'))}`;

/**
 * Completes the event's record whatever its state, creating it if the event never reached this
 * store. Changes nothing (0 rows) when it was already completed or discarded.
 */
const MARK_PROCESSED_SQL = `
  INSERT INTO onceflow_inbox (source, id, state, received_at, updated_at, history)
  VALUES (@source, @id, 'completed', @now, @now, '[' || @entry || ']')
  ON CONFLICT (source, id) DO UPDATE SET ${COMPLETED}
  WHERE state NOT IN ('completed', 'discarded')`;

/** `RecordStore.complete` in the caller's transaction: 0 rows unless `@token` holds the lease. */
const MARK_BY_LEASE_SQL = `
  UPDATE onceflow_inbox SET ${COMPLETED}
  WHERE source = @source AND id = @id AND processing_token = @token AND state = 'processing'`;

/** Why the mark by lease changed nothing. */
const INSPECT_SQL = `SELECT state FROM onceflow_inbox WHERE source = ? AND id = ?`;

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
  const now = Date.now();
  const entry = entryJson(now, { state: 'completed' });
  if (s.byLease.run({ source, id, token: ctx.processingToken, now, entry }).changes === 1) return;
  const row = s.inspect.get(source, id) as { state: string } | undefined;
  if (row === undefined) {
    throw new UsageError(
      `markProcessedInTransaction: no processing lease for ${source}/${id} in this database: pass the db of the embedded store the worker uses as its records`,
    );
  }
  if (row.state === 'completed' || row.state === 'discarded') {
    throw new AlreadyProcessedError(source, id);
  }
  // Another attempt took the lease after this one's expired (or took it and released it, or
  // dead-lettered it). The hint covers the one misuse that looks the same: a worker whose
  // records are elsewhere.
  throw new LockLostError(
    `processing lease on ${source}/${id} lost to another attempt (if the worker's records are not this database, pass source and id instead of ctx)`,
  );
}

/**
 * Marks an event processed inside the caller's better-sqlite3 transaction, so the business write
 * and the processed mark commit or roll back together: effectively-once for writes to the same
 * SQLite file. Mark first, so a losing attempt stops before its business work, and let what it
 * throws propagate so the transaction rolls back. The mark is the record's `completed` state,
 * with its history entry; the worker's `complete` afterwards changes nothing.
 *
 * Pass the handler's `ctx` (the worker's `records` being this file): the mark then holds
 * only while this attempt owns the processing lease. It throws
 * - `AlreadyProcessedError` when another attempt completed the event (the worker acks it as a
 *   duplicate, without a second effect);
 * - `LockLostError` when another attempt took the processing lease, or the record is no longer
 *   this attempt's (the worker retries);
 * - `UsageError` for a call that can never work: outside a transaction, on a file without the
 *   onceflow tables, or on one where the event has no row (another file); the worker
 *   dead-letters it at once with the message as reason.
 *
 * Passing `(db, source, id)` instead completes the record by id alone, whatever its state,
 * creating it when missing, for a worker whose records are elsewhere; a `source` or `id` that is
 * not a non-empty string is a `UsageError`.
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
  const entry = entryJson(now, { state: 'completed' });
  if (s.upsert.run({ source, id, now, entry }).changes === 0) {
    throw new AlreadyProcessedError(source, id as string);
  }
}
