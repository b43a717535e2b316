import type { HealthCheck, Inbox, InboxOutcomes, RecordStore, StoreIdentity } from '@onceflow/core';
import { type PostgresInboxConfig, resolveConfig } from './config.js';
import { batchedHotPath } from './batched.js';
import { exec, run } from './exec.js';
import { directHotPath } from './hot-path.js';
import { createInboxMethods } from './inbox.js';
import { inboxNames } from './names.js';
import { recordStatements } from './record-statements.js';
import { createRecordMethods } from './records.js';
import { inboxStatements } from './statements.js';

/**
 * The receiver's inbox and the event record over one PostgreSQL table: one row per (source, id)
 * holds the receiver's claim, the worker's processing lease, the record's state and history, and
 * (for the relay and dead letters) the envelope.
 *
 * `markProcessed(source, id)` (`InboxOutcomes`) is for a receiver's inbox whose worker keeps its
 * record in another store (the worker's `inbox` option): a received or enqueued record becomes
 * completed. In the usual shape (this store is the worker's `records`) nothing calls it.
 *
 * `release(source, id, token)` serves both contracts: the token names the lease it gives up. A
 * claim token drops the receiver's claim (a `received` record goes, so the sender's retry is
 * `new`; a record a worker already took stays as it is); a processing token gives the lease up
 * unused (the record is `enqueued` again). Tokens are random UUIDs, so one never names both. A
 * token that owns nothing releases nothing.
 */
export interface PostgresInbox
  extends Inbox,
    RecordStore,
    InboxOutcomes,
    StoreIdentity,
    HealthCheck {
  release(source: string, id: string, token: string): Promise<void>;
  /**
   * Claim-check: `get(source, id)` returns the claimed envelope in every state until retention
   * purges the record, so a receiver and a worker with `claimCheck` accept this store.
   */
  readonly keepsEnvelopes: true;
  /**
   * `SELECT 1` on a pooled connection, for readiness probes: rejects with `StoreUnavailableError`
   * when PostgreSQL does not answer. pg cannot cancel it, so the caller bounds the wait.
   */
  check(signal?: AbortSignal): Promise<void>;
  /** `"schema"."table"` this store works on. */
  readonly table: string;
  /** `postgres:"schema"."table"`: stores on one table share their rows (the database is not part of it). */
  readonly storeId: string;
}

/**
 * Creates the store, for the receiver (`inbox`) and the worker (`records`) alike. No I/O here:
 * run `migrate(pool, { schema, table })` once before use. The pool stays yours (the store never
 * ends it); every method is safe to call concurrently from any number of processes, and every pg
 * failure surfaces as `StoreUnavailableError` (503 at the receiver, retry at the worker). Needs
 * PostgreSQL 13 or later. Under concurrency, claims and `markEnqueued`s share statements
 * (`batching`, on by default) with the same answers as alone. A delivery costs two statements
 * (`begin`, then `complete`, `scheduleRetry` or `deadLetter`).
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
 * await migrate(pool);
 * const store = createPostgresInbox({ pool });
 * const receiver = createReceiver({ inbox: store, transport, sources });
 */
export function createPostgresInbox(config: PostgresInboxConfig): PostgresInbox {
  const { pool, schema, table, purgeBatchSize, purgePauseRatio, batching } = resolveConfig(config);
  const names = inboxNames(schema, table);
  const sql = inboxStatements(names);
  const records = recordStatements(names);
  const hot = batching ? batchedHotPath(pool, sql, batching) : directHotPath(pool, sql);
  return {
    table: names.qualified,
    storeId: `postgres:${names.qualified}`,
    keepsEnvelopes: true,
    ...createInboxMethods(pool, sql, hot, {
      batchSize: purgeBatchSize,
      pauseRatio: purgePauseRatio,
    }),
    ...createRecordMethods(pool, names.qualified, records),
    async release(source, id, token) {
      await exec(pool, sql.release, [source, id, token], 'release');
    },
    async check() {
      await run(pool, 'SELECT 1', [], 'check');
    },
  };
}
