// One broker stack as the package READMEs put it together: the PostgreSQL inbox and event record
// (@onceflow/inbox-postgres), RabbitMQ as the transport (@onceflow/adapter-rabbitmq), a Stripe
// receiver and a worker whose handler writes a ledger row and the processed mark in one transaction.
// Checks: a new delivery is answered 202 and written once; the same delivery again is answered 200.
// Its own schema and queue, removed at the end.
import http from 'node:http';
import { createReceiver, createWorker, defineHandler, stripe } from '@onceflow/core';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import { createPostgresInbox, markProcessed, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';
import {
  assertEqual,
  deliver,
  freePort,
  paymentSucceeded,
  stripeSecret,
  waitFor,
} from './deliver.mjs';

const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const schema = `packed_${run}`;
const queue = `packed-install-${run}`;
const pool = new pg.Pool({
  connectionString: process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  max: 4,
});
pool.on('error', () => {});
const transport = createRabbitMqTransport({ queue });
const rows = async () =>
  Number((await pool.query(`SELECT count(*) AS n FROM "${schema}".ledger`)).rows[0].n);

let server;
let worker;
try {
  await migrate(pool, { schema });
  await pool.query(
    `CREATE TABLE "${schema}".ledger (payment TEXT NOT NULL, amount BIGINT NOT NULL)`,
  );
  const inbox = createPostgresInbox({ pool, schema });
  await transport.start();

  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [stripeSecret] }) },
    inbox,
    transport,
  });
  const port = await freePort();
  server = http.createServer(receiver.nodeHandler());
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));

  worker = createWorker({
    transport,
    records: inbox,
    handlers: [
      defineHandler({
        type: 'payment_intent.succeeded',
        async handle(event, ctx) {
          const payment = event.data.object;
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await markProcessed(client, ctx, { schema });
            await client.query(`INSERT INTO "${schema}".ledger VALUES ($1, $2)`, [
              payment.id,
              payment.amount,
            ]);
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK');
            throw err;
          } finally {
            client.release();
          }
        },
      }),
    ],
  });
  await worker.start();

  const event = paymentSucceeded('evt_packed_install_broker', 1300);
  assertEqual(await deliver(port, event), 202, 'the answer to a new delivery');
  await waitFor('the ledger row', async () => (await rows()) > 0);
  assertEqual(await deliver(port, event), 200, 'the answer to the same delivery again');
  assertEqual(await rows(), 1, 'ledger rows for one event delivered twice');
  console.log('PostgreSQL inbox + RabbitMQ: 202, one ledger row, duplicate answered 200');
} finally {
  await worker?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  await transport.close();
  await deleteRabbitMqQueues({ queue }).catch((err) => console.error(`deleting ${queue}: ${err}`));
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
