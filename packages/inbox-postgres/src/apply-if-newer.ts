import { type AppliedPosition, UsageError } from '@onceflow/core';
import { staleNote, toPosition } from '@onceflow/core/kit';
import type { ClientBase } from 'pg';
import { type InboxLocation, resolveLocation } from './config.js';
import { exec } from './exec.js';
import { type InboxNames, inboxNames } from './names.js';
import type { Statement } from './statements.js';

interface VersionStatements {
  readonly names: InboxNames;
  /** Moves the aggregate's position forward; no row when it is not newer (the row stays locked). */
  readonly advance: Statement;
  /** The applied position, read after `advance` declined (under its row lock). */
  readonly applied: Statement;
}

const cache = new Map<string, VersionStatements>();

function statementsFor(location: InboxLocation): VersionStatements {
  const { schema, table } = resolveLocation(location);
  const key = `${schema}.${table}`;
  let s = cache.get(key);
  if (s === undefined) {
    const names = inboxNames(schema, table);
    const t = names.sibling('versions');
    s = {
      names,
      advance: {
        name: `onceflow_advance_${names.key}`,
        text: `INSERT INTO ${t} AS v (aggregate, version, tie) VALUES ($1, $2::bigint, $3)
          ON CONFLICT (aggregate) DO UPDATE
          SET version = EXCLUDED.version, tie = EXCLUDED.tie, updated_at = now()
          WHERE (EXCLUDED.version, EXCLUDED.tie) > (v.version, v.tie)
          RETURNING 1`,
      },
      applied: {
        name: `onceflow_applied_${names.key}`,
        text: `SELECT version::text AS version, tie FROM ${t} WHERE aggregate = $1`,
      },
    };
    cache.set(key, s);
  }
  return s;
}

/** SQLSTATEs of a table or schema that does not exist: the location is wrong, or never migrated. */
const MISSING = new Set(['42P01', '3F000']);

async function query(
  client: ClientBase,
  statement: Statement,
  values: readonly unknown[],
  names: InboxNames,
) {
  try {
    return await exec<Record<string, unknown>>(client, statement, values, 'applyIfNewer');
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    if (typeof code === 'string' && MISSING.has(code)) {
      throw new UsageError(
        `applyIfNewer: no table ${names.sibling('versions')}: pass the { schema, table } the store was created with (and run migrate() on them first)`,
      );
    }
    throw err;
  }
}

const isPool = (v: unknown) =>
  typeof v === 'object' && v !== null && 'totalCount' in v && 'connect' in v;

/**
 * The stale-event guard, inside the transaction `client` has open: records `position` as the
 * aggregate's highest applied one and resolves `applied` when it is newer than what was applied
 * before, else changes nothing and resolves `stale`. On `applied`, make the business write in the
 * same transaction: both commit or roll back together, so a rolled-back write never moves the
 * position. On `stale`, commit (or roll back) and return from the handler without writing: the
 * event is completed, not retried, and when `position.ctx` is given its record's completed entry
 * carries the note `stale: version 5 ≤ version 7 applied for order:1` (see `ctx.note`).
 *
 * Positions are compared as `(version, tieBreak)`: an equal version is stale, so a redelivered
 * event changes nothing a second time. The table is `<table>_versions` beside the inbox table of
 * `location` (created by `migrate`); rows are kept per aggregate until you delete them.
 *
 * Concurrency: the statement takes the aggregate's row lock, so a concurrent transaction for the
 * same aggregate waits until this one ends, then compares with what it committed. Under
 * REPEATABLE READ or SERIALIZABLE the loser gets a serialization failure instead (wrapped in
 * `StoreUnavailableError`): roll back and let the worker retry.
 *
 * Call it before `markProcessed`, and mark only on `applied`: a record the transaction completed
 * keeps that entry, and the note would not be written. Rejects with `UsageError` for a pool
 * (pass the client of your transaction), a location without the table, or a position that cannot
 * be compared (the worker dead-letters it at once); with `StoreUnavailableError` when PostgreSQL
 * fails (roll back).
 *
 * @example
 * await client.query('BEGIN');
 * const position = { aggregate: `order:${order.id}`, version: order.version, ctx };
 * if ((await applyIfNewer(client, position)) === 'applied') {
 *   await client.query('UPDATE orders SET status = $2 WHERE id = $1', [order.id, order.status]);
 * }
 * await client.query('COMMIT');
 */
export async function applyIfNewer(
  client: ClientBase,
  position: AppliedPosition,
  location: InboxLocation = {},
): Promise<'applied' | 'stale'> {
  if (isPool(client)) {
    throw new UsageError(
      'applyIfNewer: pass the pg client of your open transaction, not a pool (a pool runs the statement on its own, outside your transaction)',
    );
  }
  const p = toPosition(position);
  const s = statementsFor(location);
  const values = [p.aggregate, p.version.toString(), p.tie];
  if ((await query(client, s.advance, values, s.names)).rowCount === 1) return 'applied';
  const { rows } = await query(client, s.applied, [p.aggregate], s.names);
  const row = rows[0] as { version: string; tie: string };
  position.ctx?.note(staleNote(p, { version: BigInt(row.version), tie: row.tie }));
  return 'stale';
}
