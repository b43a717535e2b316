import type { Target, TargetOptions } from '../target.js';
import { CommandLineError } from '../command-line-error.js';
import { createPostgresInboxBrowser } from './postgres-browser.js';

async function load() {
  try {
    const [{ default: pg }, store] = await Promise.all([
      import('pg'),
      import('@onceflow/inbox-postgres'),
    ]);
    return { Pool: pg.Pool, createPostgresInbox: store.createPostgresInbox };
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(
        '--store postgres needs the packages @onceflow/inbox-postgres and pg installed',
      );
    }
    throw err;
  }
}

/**
 * Opens the PostgreSQL inbox at `--pg-url` (schema `ONCEFLOW_PG_SCHEMA`, table
 * `ONCEFLOW_PG_TABLE`, defaults `public`.`onceflow_inbox`): inbox and inbox browser, no transport.
 * It never migrates: a missing table is reported, not created. One connection at most.
 */
export async function openPostgres(options: TargetOptions): Promise<Target> {
  if (!options.pgUrl)
    throw new CommandLineError('--store postgres needs --pg-url or ONCEFLOW_PG_URL');
  const { Pool, createPostgresInbox } = await load();
  const pool = new Pool({ connectionString: options.pgUrl, max: 1 });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    const inbox = createPostgresInbox({
      pool,
      schema: options.env.ONCEFLOW_PG_SCHEMA,
      table: options.env.ONCEFLOW_PG_TABLE,
    });
    await pool.query('SELECT 1');
    return {
      inbox,
      browser: createPostgresInboxBrowser(pool, inbox.table),
      close: () => pool.end(),
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
