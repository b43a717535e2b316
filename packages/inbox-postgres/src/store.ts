import type { Inbox, ProcessedStore } from '@onceflow/core';
import { type PostgresInboxConfig, resolveConfig } from './config.js';
import { batchedHotPath } from './batched.js';
import { exec } from './exec.js';
import { directHotPath } from './hot-path.js';
import { createInboxMethods } from './inbox.js';
import { inboxNames } from './names.js';
import { createProcessedMethods } from './processed.js';
import { inboxStatements } from './statements.js';

/**
 * The receiver's inbox and the worker's processed-guard over one PostgreSQL table.
 *
 * `release(source, id, token)` serves both contracts: the token names the lease it gives up. A
 * claim token drops the pending claim (so the sender's retry is `new`; a processing lease on the
 * same row stays); a processing token drops the processing lease (so the next delivery can
 * `begin`; the inbox claim stays). Tokens are random UUIDs, so one never names both. A token that
 * owns nothing releases nothing.
 */
export interface PostgresInbox extends Inbox, ProcessedStore {
  release(source: string, id: string, token: string): Promise<void>;
  /** `"schema"."table"` this store works on. */
  readonly table: string;
}

/**
 * Creates the store. No I/O here: run `migrate(pool, { schema, table })` once before use. The
 * pool stays yours (the store never ends it); every method is safe to call concurrently from any
 * number of processes, and every pg failure surfaces as `StoreUnavailableError` (503 at the
 * receiver, retry at the worker). Needs PostgreSQL 13 or later. Under concurrency, claims and
 * `markEnqueued`s share statements (`batching`, on by default) with the same answers as alone.
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
 * await migrate(pool);
 * const inbox = createPostgresInbox({ pool });
 * const receiver = createReceiver({ inbox, transport, sources });
 */
export function createPostgresInbox(config: PostgresInboxConfig): PostgresInbox {
  const { pool, schema, table, purgeBatchSize, batching } = resolveConfig(config);
  const names = inboxNames(schema, table);
  const sql = inboxStatements(names);
  const hot = batching ? batchedHotPath(pool, sql, batching) : directHotPath(pool, sql);
  return {
    table: names.qualified,
    ...createInboxMethods(pool, sql, hot, purgeBatchSize),
    ...createProcessedMethods(pool, sql),
    async release(source, id, token) {
      await exec(pool, sql.release, [source, id, token], 'release');
    },
  };
}
