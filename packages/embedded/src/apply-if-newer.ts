import { type AppliedPosition, UsageError } from '@onceflow/core';
import { staleNote, toPosition } from '@onceflow/core/kit';
import type { Database, Statement } from 'better-sqlite3';

/** Moves the aggregate's position forward, or changes nothing (0 rows) when it is not newer. */
const ADVANCE_SQL = `
  INSERT INTO onceflow_versions (aggregate, version, tie, updated_at)
  VALUES (@aggregate, @version, @tie, @now)
  ON CONFLICT (aggregate) DO UPDATE SET
    version = excluded.version, tie = excluded.tie, updated_at = excluded.updated_at
  WHERE (excluded.version, excluded.tie) > (onceflow_versions.version, onceflow_versions.tie)`;

const APPLIED_SQL = `SELECT version, tie FROM onceflow_versions WHERE aggregate = ?`;

interface VersionStatements {
  readonly advance: Statement;
  readonly applied: Statement;
}

const cache = new WeakMap<Database, VersionStatements>();

function statements(db: Database): VersionStatements {
  let s = cache.get(db);
  if (!s) {
    try {
      s = {
        advance: db.prepare(ADVANCE_SQL),
        applied: db.prepare(APPLIED_SQL).safeIntegers(true),
      };
    } catch (err) {
      throw new UsageError(
        `applyIfNewer: the database has no onceflow_versions table (${(err as Error).message}): pass the embedded store's db (embedded.db), or open the file with createEmbedded().start() or applyMigrations(db) first`,
      );
    }
    cache.set(db, s);
  }
  return s;
}

/**
 * The stale-event guard, inside the caller's better-sqlite3 transaction: records `position` as
 * the aggregate's highest applied one and answers `applied` when it is newer than what was
 * applied before, else changes nothing and answers `stale`. On `applied`, make the business write
 * in the same transaction: both commit or roll back together, so a rolled-back write never moves
 * the position. On `stale`, return from the handler without writing: the event is completed,
 * not retried, and when `position.ctx` is given its record's completed entry carries the note
 * `stale: version 5 ≤ version 7 applied for order:1` (see `ctx.note`).
 *
 * Positions are compared as `(version, tieBreak)`: an equal version is stale, so a redelivered
 * event changes nothing a second time. Rows are kept per aggregate until you delete them from
 * `onceflow_versions`.
 *
 * Call it before `markProcessedInTransaction`, and mark only on `applied`: a record the
 * transaction completed keeps that entry, and the note would not be written. It throws
 * `UsageError` outside a transaction, on a file without the onceflow tables, or for a position
 * that cannot be compared (the worker dead-letters it at once). Run the transaction with
 * `.immediate()`, as for the mark.
 *
 * @example
 * const apply = embedded.db.transaction((ctx: HandlerContext, order: Order) => {
 *   if (applyIfNewer(embedded.db, { aggregate: `order:${order.id}`, version: order.version, ctx }) === 'stale') return;
 *   embedded.db.prepare('UPDATE orders SET status = ? WHERE id = ?').run(order.status, order.id);
 * });
 * apply.immediate(ctx, event); // in the handler
 */
export function applyIfNewer(db: Database, position: AppliedPosition): 'applied' | 'stale' {
  if (!db.inTransaction) {
    throw new UsageError(
      'applyIfNewer must run inside a transaction on the db, with the write it guards: call it in db.transaction(...).immediate()',
    );
  }
  const p = toPosition(position);
  const s = statements(db);
  const row = { aggregate: p.aggregate, version: p.version, tie: p.tie, now: Date.now() };
  if (s.advance.run(row).changes === 1) return 'applied';
  const applied = s.applied.get(p.aggregate) as { version: bigint; tie: string };
  position.ctx?.note(staleNote(p, applied));
  return 'stale';
}
