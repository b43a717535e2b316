import { CommandLineError } from '../command-line-error.js';
import type { StoreTarget, TargetOptions } from '../target.js';
import { loadPackages } from './broker.js';
import { createPostgresInboxBrowser } from './postgres-browser.js';

const MISSING: Readonly<Record<string, string>> = {
  '42P01': 'does not exist',
  '42703': 'has no event record (migration 002)',
};

/**
 * `--store postgres`: the PostgreSQL store at `--pg-url` (schema `ONCEFLOW_PG_SCHEMA`, table
 * `ONCEFLOW_PG_TABLE`, defaults `public`.`onceflow_inbox`): event record, inbox and inbox browser.
 * It never migrates: a missing table, or one without the event record's columns, is reported,
 * not created. One connection at most.
 */
export async function openPostgres(options: TargetOptions): Promise<StoreTarget> {
  if (!options.pgUrl)
    throw new CommandLineError('--store postgres needs --pg-url or ONCEFLOW_PG_URL');
  const { pg, store } = await loadPackages(
    '--store postgres',
    '@onceflow/inbox-postgres and pg',
    async () => ({
      pg: (await import('pg')).default,
      store: await import('@onceflow/inbox-postgres'),
    }),
  );
  const pool = new pg.Pool({ connectionString: options.pgUrl, max: 1 });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    const inbox = store.createPostgresInbox({
      pool,
      schema: options.env.ONCEFLOW_PG_SCHEMA,
      table: options.env.ONCEFLOW_PG_TABLE,
    });
    await pool
      .query(`SELECT state, history, updated_at FROM ${inbox.table} LIMIT 0`)
      .catch((err) => {
        const why = MISSING[(err as { code?: string }).code ?? ''];
        if (why === undefined) throw err;
        throw new Error(
          `the PostgreSQL table ${inbox.table} ${why}: run migrate() from @onceflow/inbox-postgres (set ONCEFLOW_PG_SCHEMA and ONCEFLOW_PG_TABLE, or postgres.schema and postgres.table in the config file)`,
        );
      });
    return {
      records: inbox,
      inbox,
      browser: createPostgresInboxBrowser(pool, inbox.table),
      close: () => pool.end(),
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
