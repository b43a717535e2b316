import { StoreUnavailableError } from '@onceflow/core';
import type { Pool } from 'pg';
import { type InboxLocation, resolveLocation } from './config.js';
import { checksum, loadMigrations, type Migration, renderMigration } from './migrations.js';
import { inboxNames, MIGRATIONS_TABLE } from './names.js';
import { toStoreError } from './store-error.js';

/** First key of the two-key advisory lock every onceflow migration takes ("onc" + "f"). */
const LOCK_NAMESPACE = 0x6f6e6366;

export interface MigrateResult {
  /** Migrations applied by this call, in order (empty when the schema was up to date). */
  readonly applied: readonly string[];
}

/**
 * Brings the inbox tables of one (schema, table) up to date by applying the SQL files shipped in
 * `migrations/`. Idempotent: each file is applied once and recorded in `<schema>.onceflow_migrations`.
 * Safe when several processes start at once: all of it runs in one transaction under a
 * transaction-scoped advisory lock, so one applies and the others wait, then find nothing to do.
 * Creates the schema if it does not exist. Rejects with `StoreUnavailableError` (nothing applied)
 * when PostgreSQL fails; with `ConfigError` for a bad schema or table name.
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool, { schema: 'onceflow' }); // at start-up, before createPostgresInbox
 */
export async function migrate(pool: Pool, options: InboxLocation = {}): Promise<MigrateResult> {
  return applyMigrations(pool, options, await loadMigrations());
}

/** `migrate` with the given migrations (in order) instead of every shipped one. */
export async function applyMigrations(
  pool: Pool,
  options: InboxLocation,
  migrations: readonly Migration[],
): Promise<MigrateResult> {
  const { schema, table } = resolveLocation(options);
  const names = inboxNames(schema, table);
  const log = `${names.schema}.${MIGRATIONS_TABLE}`;
  const client = await pool.connect().catch((err: unknown) => {
    throw toStoreError(err, 'migrate');
  });
  let failed: unknown;
  try {
    await client.query('BEGIN');
    // Per schema, not per table: two inboxes migrating into one new schema share its set-up.
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_NAMESPACE, schema]);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${names.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${log} (target text NOT NULL, name text NOT NULL,
        checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (target, name))`,
    );
    const done = await client.query<{ name: string }>(`SELECT name FROM ${log} WHERE target = $1`, [
      table,
    ]);
    const seen = new Set(done.rows.map((r) => r.name));
    const applied: string[] = [];
    for (const m of migrations.filter((m) => !seen.has(m.name))) {
      const sql = renderMigration(m.sql, names);
      await client.query(sql);
      await client.query(`INSERT INTO ${log} (target, name, checksum) VALUES ($1, $2, $3)`, [
        table,
        m.name,
        checksum(sql),
      ]);
      applied.push(m.name);
    }
    await client.query('COMMIT');
    return { applied };
  } catch (err) {
    failed = err;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err instanceof StoreUnavailableError ? err : toStoreError(err, 'migrate');
  } finally {
    client.release(failed instanceof Error ? failed : undefined);
  }
}
