import { describeInboxConformance } from '@onceflow/conformance';
import { afterAll } from 'vitest';
import { createPostgresInbox, migrate } from '../src/index.js';
import { createPool, dropSchema, randomSchema } from './helpers.js';

const pool = createPool(10);
const schema = randomSchema();
let tables = 0;

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

// A fresh inbox table per scenario, all in this run's schema (dropped afterwards).
describeInboxConformance('postgres', {
  createStore: async () => {
    const table = `inbox_${++tables}`;
    await migrate(pool, { schema, table });
    return createPostgresInbox({ pool, schema, table });
  },
});
