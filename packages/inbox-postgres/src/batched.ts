import type { Pool } from 'pg';
import { type BatchLimits, createBatcher } from './batcher.js';
import {
  type ClaimRow,
  claimValues,
  directHotPath,
  type HotPath,
  type InsertOutcome,
} from './hot-path.js';
import type { InboxStatements } from './statements.js';
import { toStoreError } from './store-error.js';

/** Leases up to ~31 years; a longer one could overflow PostgreSQL's interval and fail a batch. */
const MAX_BATCHED_LEASE_MS = 1e12;

/**
 * SQLSTATEs of a batch that met another transaction's lock (lock_not_available after
 * `BATCH_LOCK_TIMEOUT`, deadlock_detected): nothing of it was written, and each caller goes alone.
 */
const CONTENDED = new Set(['55P03', '40P01']);
const contended = (err: unknown): boolean =>
  CONTENDED.has((err as { code?: unknown } | null)?.code as string);

/** PostgreSQL text cannot hold NUL: such a value fails its statement. */
const storable = (...values: string[]): boolean => values.every((v) => !v.includes('\u0000'));

interface Enqueued {
  readonly source: string;
  readonly id: string;
  readonly token: string;
}

/** For each row, the index of the first row in the batch with its (source, id). */
function leaders(rows: readonly ClaimRow[]): number[] {
  const seen = new Map<string, Map<string, number>>();
  return rows.map((r, i) => {
    const ids = seen.get(r.source) ?? new Map<string, number>();
    seen.set(r.source, ids);
    const first = ids.get(r.id);
    if (first !== undefined) return first;
    ids.set(r.id, i);
    return i;
  });
}

/** A batch of one runs the single-row statement: the array form costs more for one row. */
async function insertOne(pool: Pool, sql: InboxStatements, r: ClaimRow): Promise<string[]> {
  const { name, text } = sql.claimInsert;
  const res = await pool.query({ name, text, values: claimValues(r) });
  return res.rowCount === 1 ? [r.token] : [];
}

/**
 * One statement for the whole batch, one row per distinct (source, id). A later claim of an id
 * already in the batch is answered from the first one's outcome, as the slow path would answer it
 * right after that insert: same hash → `in-flight` (the first holds a live lease), other hash →
 * `conflict`; if the first found a row already there, every claim of that id takes the slow path.
 */
async function insertClaims(
  pool: Pool,
  sql: InboxStatements,
  rows: readonly ClaimRow[],
): Promise<InsertOutcome[]> {
  const lead = leaders(rows);
  const unique = rows.filter((_, i) => lead[i] === i);
  const won = new Set(unique.length === 1 ? await insertOne(pool, sql, unique[0] as ClaimRow) : []);
  if (unique.length > 1) {
    const res = await pool.query<{ lease_token: string }>({
      name: sql.claimInsertBatch.name,
      text: sql.claimInsertBatch.text,
      values: [
        unique.map((r) => r.source),
        unique.map((r) => r.id),
        unique.map((r) => r.payloadHash),
        unique.map((r) => r.encoded),
        unique.map((r) => r.receivedAt),
        unique.map((r) => r.token),
        unique.map((r) => r.leaseMs),
        unique.map((r) => r.type),
        unique.map((r) => r.key),
        unique.map((r) => r.traceId),
      ],
    });
    for (const r of res.rows) won.add(r.lease_token);
  }
  return rows.map((row, i): InsertOutcome => {
    const first = rows[lead[i] as number] as ClaimRow;
    if (!won.has(first.token)) return 'exists';
    if (first === row) return 'inserted';
    return row.payloadHash === first.payloadHash
      ? { status: 'in-flight' }
      : { status: 'conflict', existingHash: first.payloadHash };
  });
}

/** A batch of one runs the single-row statement, as for claims. */
async function markEnqueued(
  pool: Pool,
  sql: InboxStatements,
  items: readonly Enqueued[],
): Promise<undefined[]> {
  const [only] = items;
  const statement = items.length === 1 ? sql.markEnqueued : sql.markEnqueuedBatch;
  const values: unknown[] =
    items.length === 1 && only
      ? [only.source, only.id, only.token]
      : [items.map((e) => e.source), items.map((e) => e.id), items.map((e) => e.token)];
  await pool.query({ name: statement.name, text: statement.text, values });
  return items.map(() => undefined);
}

/** Runs `batch`; if it met another transaction's lock, runs `alone` for each item instead. */
async function orAlone<I, O>(
  items: readonly I[],
  batch: (items: readonly I[]) => Promise<readonly O[]>,
  alone: (item: I) => Promise<O>,
): Promise<readonly (O | Promise<O>)[]> {
  try {
    return await batch(items);
  } catch (err) {
    if (!contended(err)) throw err;
    return items.map(alone);
  }
}

/**
 * The hot path with natural batching: claims' first inserts, and `markEnqueued`s, that arrive
 * while `maxInFlight` statements of their kind are running go together as one statement when one
 * finishes (see `createBatcher`). Same answers as one statement per call: of concurrent claims of
 * one id exactly one is `inserted`; `markEnqueued` acts only for a token that owns its row. If a
 * batch's statement fails, each of its callers rejects with its own `StoreUnavailableError` and
 * nothing of the batch was written; a batch fails only for reasons that would fail its callers
 * alone too (database down, timeout), never for another caller's arguments. A batch that meets
 * another transaction's lock gives up after `BATCH_LOCK_TIMEOUT` and each caller runs its own
 * statement instead, so only the caller whose row is locked waits for it, as without batching.
 */
export function batchedHotPath(pool: Pool, sql: InboxStatements, limits: BatchLimits): HotPath {
  // Arguments that would make a statement fail go alone, so they fail only their own caller.
  const alone = directHotPath(pool, sql);
  const claims = createBatcher<ClaimRow, InsertOutcome>({
    ...limits,
    run: (rows) => orAlone(rows, (r) => insertClaims(pool, sql, r), alone.insertClaim),
    failure: (cause) => toStoreError(cause, 'claim'),
  });
  const enqueued = createBatcher<Enqueued, undefined>({
    ...limits,
    run: (items) =>
      orAlone(
        items,
        (e) => markEnqueued(pool, sql, e),
        (e) => alone.markEnqueued(e.source, e.id, e.token).then(() => undefined),
      ),
    failure: (cause) => toStoreError(cause, 'markEnqueued'),
  });
  return {
    insertClaim: (row) =>
      row.leaseMs <= MAX_BATCHED_LEASE_MS &&
      storable(row.source, row.id, row.payloadHash, row.type, row.key ?? '')
        ? claims.submit(row)
        : alone.insertClaim(row),
    markEnqueued: (source, id, token) =>
      storable(source, id, token)
        ? enqueued.submit({ source, id, token })
        : alone.markEnqueued(source, id, token),
  };
}
