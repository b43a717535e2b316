import {
  AlreadyProcessedError,
  type HandlerContext,
  LockLostError,
  UsageError,
} from '@onceflow/core';
import type { ClientBase, QueryResult } from 'pg';
import { type InboxLocation, resolveLocation } from './config.js';
import { exec } from './exec.js';
import { type InboxNames, inboxNames } from './names.js';
import { enter, historyEntry, RECORD_NOW } from './record-sql.js';
import type { Statement } from './statements.js';

/** What the mark reads from the handler's context: the event and the worker's processing lease. */
type LeaseHolder = Pick<HandlerContext, 'envelope' | 'processingToken'>;
type EventRef = { readonly source: string; readonly id: string };

interface MarkStatements {
  readonly names: InboxNames;
  /** By (source, id) alone: creates the record when missing, changes nothing once completed. */
  readonly upsert: Statement;
  /** Only while the caller's lease holds the record; READ COMMITTED waits for a concurrent mark. */
  readonly byLease: Statement;
  /** Why `byLease` changed nothing: the row as it stands now. */
  readonly inspect: Statement;
}

const cache = new Map<string, MarkStatements>();

function statementsFor(location: InboxLocation): MarkStatements {
  const { schema, table } = resolveLocation(location);
  const key = `${schema}.${table}`;
  let statements = cache.get(key);
  if (statements === undefined) {
    const names = inboxNames(schema, table);
    const t = names.qualified;
    // The record is completed, with a history entry saying the handler's transaction did it.
    const entry = { state: `'completed'`, note: `'marked in the handler''s transaction'` };
    const done = (history: string, actor?: string) =>
      `processed_at = now(), proc_token = NULL, proc_expires_at = NULL, lease_token = NULL,
      lease_expires_at = NULL, next_attempt_at = NULL,
      ${enter(history, { ...entry, attempt: actor && 'NULLIF(attempts, 0)', actor })}`;
    statements = {
      names,
      upsert: {
        name: `onceflow_mark_${names.key}`,
        text: `INSERT INTO ${t} AS t (source, id, state, received_at, processed_at, updated_at, history)
          VALUES ($1, $2, 'completed', now(), now(), ${RECORD_NOW}, jsonb_build_array(${historyEntry(entry)}))
          ON CONFLICT (source, id) DO UPDATE SET ${done('t.history')}
          WHERE t.state NOT IN ('completed', 'discarded')
          RETURNING 1`,
      },
      byLease: {
        name: `onceflow_mark_lease_${names.key}`,
        text: `UPDATE ${t} SET ${done('history', 'consumer')}
          WHERE source = $1 AND id = $2 AND proc_token = $3 AND state = 'processing' RETURNING 1`,
      },
      inspect: {
        name: `onceflow_mark_why_${names.key}`,
        text: `SELECT state, proc_token FROM ${t} WHERE source = $1 AND id = $2`,
      },
    };
    cache.set(key, statements);
  }
  return statements;
}

/** SQLSTATEs of a table or schema that does not exist: the location is wrong, or never migrated. */
const MISSING = new Set(['42P01', '3F000']);

async function run(
  client: ClientBase,
  statement: Statement,
  values: readonly unknown[],
  names: InboxNames,
): Promise<QueryResult> {
  try {
    return await exec(client, statement, values, 'markProcessed');
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    if (typeof code === 'string' && MISSING.has(code)) {
      throw new UsageError(
        `markProcessed: no inbox table ${names.qualified}: pass the { schema, table } the store was created with (and run migrate() on them first)`,
      );
    }
    throw err;
  }
}

const isLeaseHolder = (v: LeaseHolder | EventRef): v is LeaseHolder =>
  typeof v === 'object' && v !== null && 'processingToken' in v;

function checkEvent(event: EventRef): void {
  if (typeof event !== 'object' || event === null) {
    throw new UsageError(
      `markProcessed: expected the handler's ctx or { source, id }, got ${event}`,
    );
  }
  for (const field of ['source', 'id'] as const) {
    const value: unknown = event[field];
    if (typeof value !== 'string' || value === '') {
      throw new UsageError(
        `markProcessed: event.${field} must be a non-empty string, got ${JSON.stringify(value) ?? 'undefined'}: pass the handler's ctx (or ctx.envelope), not a field of the payload`,
      );
    }
  }
}

async function markByLease(client: ClientBase, ctx: LeaseHolder, s: MarkStatements) {
  const { source, id } = ctx.envelope;
  const at = `${source}/${id} in ${s.names.qualified}`;
  if (ctx.processingToken === '') {
    throw new UsageError(
      `markProcessed: ctx holds no processing lease for ${source}/${id}: pass the ctx the worker gave the handler`,
    );
  }
  const values = [source, id, ctx.processingToken];
  if ((await run(client, s.byLease, values, s.names)).rowCount === 1) return;
  const { rows } = await run(client, s.inspect, [source, id], s.names);
  const row = rows[0] as { state: string; proc_token: string | null } | undefined;
  if (row === undefined) {
    throw new UsageError(
      `markProcessed: no processing lease for ${at}: pass the { schema, table } the store was created with, and give the worker this store as its records`,
    );
  }
  if (row.state === 'completed' || row.state === 'discarded') {
    throw new AlreadyProcessedError(source, id);
  }
  // Another attempt took the lease after this one's expired (or took it and released it). The
  // hint covers the one misuse that looks the same: a worker whose record store is elsewhere.
  throw new LockLostError(
    `processing lease on ${source}/${id} lost to another attempt (if the worker's records are not ${s.names.qualified}, pass the event instead of ctx)`,
  );
}

/**
 * Marks an event processed inside the caller's open transaction, so the business write and the
 * mark commit or roll back together: its record becomes `completed`, with a history entry saying
 * the handler's transaction did it (the worker's own `complete` afterwards changes nothing). Call
 * it first in the transaction, so a losing attempt stops before doing its business work.
 *
 * Pass the handler's `ctx` (the worker's `records` being this store): the mark then holds
 * only while this attempt owns the processing lease. Outcomes:
 * - `AlreadyProcessedError`: another attempt completed the event (roll back; the worker acks it
 *   as a duplicate, the other attempt's effects stand);
 * - `LockLostError`: another attempt took the processing lease (roll back; the worker retries);
 * - `UsageError`: a call that can never work (a location with no inbox table, or no row for the
 *   event in it: the wrong `schema` or `table`); the worker dead-letters it at once with the
 *   message as reason. An invalid `schema` or `table` name is a `ConfigError`.
 *
 * Passing `{ source, id }` instead (e.g. `ctx.envelope`) marks by id alone, creating the record
 * when missing (a dead letter becomes completed too), for a worker whose record store is elsewhere; a `source` or `id` that is not a
 * non-empty string is a `UsageError`.
 *
 * Concurrency: the mark takes the row lock, so a concurrent attempt's mark waits until this
 * transaction ends, then throws if it committed (or proceeds if it rolled back). Under REPEATABLE
 * READ or SERIALIZABLE the loser gets a serialization failure instead (wrapped in
 * `StoreUnavailableError`): roll back and let the worker retry. Other pg failures surface as
 * `StoreUnavailableError` with the cause.
 *
 * @example
 * // withTransaction: BEGIN, COMMIT or ROLLBACK, and no crash when PostgreSQL ends the connection
 * handle: (event, ctx) =>
 *   withTransaction(pool, async (client) => {
 *     await markProcessed(client, ctx, { schema: 'onceflow' }); // throws → nothing is written
 *     await client.query('INSERT INTO ledger (account, amount) VALUES ($1, $2)', [acct, amount]);
 *   }), // AlreadyProcessedError: the worker acks; UsageError: dead-lettered; else retried
 */
export async function markProcessed(
  client: ClientBase,
  ctx: Pick<HandlerContext, 'envelope' | 'processingToken'>,
  location?: InboxLocation,
): Promise<void>;
/** Marks by (source, id) alone, creating the row when missing; see the `ctx` form above. */
export async function markProcessed(
  client: ClientBase,
  event: { readonly source: string; readonly id: string },
  location?: InboxLocation,
): Promise<void>;
export async function markProcessed(
  client: ClientBase,
  event: LeaseHolder | EventRef,
  location: InboxLocation = {},
): Promise<void> {
  const s = statementsFor(location);
  if (isLeaseHolder(event)) return markByLease(client, event, s);
  checkEvent(event);
  const res = await run(client, s.upsert, [event.source, event.id], s.names);
  if (res.rowCount !== 1) throw new AlreadyProcessedError(event.source, event.id);
}
