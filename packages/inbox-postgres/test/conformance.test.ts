import { describeStoreConformance } from '@onceflow/conformance';
import { afterAll } from 'vitest';
import { createPostgresInbox, migrate, type PostgresInboxConfig } from '../src/index.js';
import { createPool, dropSchema, randomSchema } from './helpers.js';

const pool = createPool(10);
const schema = randomSchema();
let tables = 0;

afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** A fresh table per scenario, all in this run's schema (dropped afterwards). */
const storeWith = (batching: PostgresInboxConfig['batching']) => async () => {
  const table = `inbox_${++tables}`;
  await migrate(pool, { schema, table });
  return createPostgresInbox({ pool, schema, table, batching });
};

describeStoreConformance('postgres', { createStore: storeWith(undefined) });

describeStoreConformance('postgres-unbatched', { createStore: storeWith(false) });

// One statement at a time: every concurrent caller queues behind it and shares the next one.
describeStoreConformance('postgres-batch-one-in-flight', {
  createStore: storeWith({ maxBatch: 8, maxInFlight: 1 }),
});
