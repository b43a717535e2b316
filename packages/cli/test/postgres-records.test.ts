import { randomBytes } from 'node:crypto';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';
import { describeRecordCommands } from './record-commands.js';

// The shared PostgreSQL; a schema of this run's own, dropped afterwards.
const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `cli_rec_${randomBytes(4).toString('hex')}`;
const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
await migrate(pool, { schema });

describeRecordCommands({
  store: 'postgres',
  flags: [],
  env: { ONCEFLOW_PG_URL: PG_URL, ONCEFLOW_PG_SCHEMA: schema },
  records: createPostgresInbox({ pool, schema }),
  cleanup: async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  },
});
