/**
 * The outbox dispatcher vs a hand-written outbox loop, over the same PostgreSQL and RabbitMQ, one
 * run, rounds interleaved so background load hits both alike (median round kept).
 *
 *   dispatcher   createPostgresOutbox + createOutboxDispatcher (batches of BENCH_BATCH): lease the
 *                due head of each key, publish, mark sent; per-key order and lease expiry included
 *   hand-written one transaction per batch on a plain table: SELECT … ORDER BY seq LIMIT n
 *                FOR UPDATE SKIP LOCKED, publish, UPDATE … SET sent_at, COMMIT (no per-key order)
 *
 * Both publish through the same onceflow RabbitMQ transport (publisher confirms), so the ratio is
 * the outbox's own cost; the adapter's against raw amqplib is in adapter-rabbitmq's bench. Each
 * round adds BENCH_EVENTS events (700-byte payloads, keys spread over 64; not timed), then times
 * draining them with BENCH_LOOPS dispatchers or loops at once. The aim: ≥ 0.8×. Prints; never
 * fails on a time. Env: ONCEFLOW_PG_URL, ONCEFLOW_AMQP_URL, BENCH_EVENTS (default 5000),
 * BENCH_ROUNDS (default 3), BENCH_BATCH (default 100), BENCH_LOOPS (default 1,4).
 */
import { randomBytes } from 'node:crypto';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import {
  benchEnvelopes,
  interleaved,
  measure,
  printComparisons,
} from '@onceflow/conformance/bench';
import { createOutboxDispatcher, type Envelope, type Transport } from '@onceflow/core';
import { decodeEnvelope, encodeEnvelope } from '@onceflow/core/kit';
import amqp from 'amqplib';
import pg from 'pg';
import { createPostgresOutbox, migrate } from '../src/index.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const LOOPS = (process.env.BENCH_LOOPS ?? '1,4').split(',').map(Number);
const KEYS = Number(process.env.BENCH_KEYS ?? 1024);

const run = randomBytes(3).toString('hex');
const schema = `onceflow_bench_outbox_${run}`;
const queue = `onceflow-bench-outbox-${run}`;
const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
await migrate(pool, { schema });
const plain = `"${schema}".handwritten_outbox`;
await pool.query(`CREATE TABLE ${plain} (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL, ordering_key text, envelope text NOT NULL, sent_at timestamptz)`);
await pool.query(`CREATE INDEX ON ${plain} (seq) WHERE sent_at IS NULL`);
const outbox = createPostgresOutbox({ pool, schema });
const transport: Transport = createRabbitMqTransport({ queue });
const amqpConn = await amqp.connect(defaultAmqpUrl());
const purger = await amqpConn.createChannel();

/** Adds the events in transactions of 500, as an application would (not timed). */
async function fill(add: (client: pg.PoolClient, envelope: Envelope) => Promise<unknown>) {
  const envelopes = benchEnvelopes(EVENTS).map((e, i) => ({ ...e, key: `acct_${i % KEYS}` }));
  const client = await pool.connect();
  try {
    for (let i = 0; i < envelopes.length; i += 500) {
      await client.query('BEGIN');
      for (const envelope of envelopes.slice(i, i + 500)) await add(client, envelope);
      await client.query('COMMIT');
    }
  } finally {
    client.release();
  }
  await pool.query('VACUUM ANALYZE');
}

async function dispatcherRound(loops: number) {
  await fill((client, e) =>
    outbox.add(client, {
      id: e.id,
      source: e.source,
      type: e.type,
      key: e.key,
      payload: e.payload,
    }),
  );
  await purger.purgeQueue(queue);
  return measure(`dispatcher x${loops}`, EVENTS, async () => {
    const dispatchers = Array.from({ length: loops }, () =>
      createOutboxDispatcher({ outbox, transport, batchSize: BATCH, retainSentMs: false }),
    );
    await Promise.all(dispatchers.map((d) => d.runOnce()));
  });
}

/** The loop a careful user writes by hand. */
async function handwrittenLoop(): Promise<void> {
  for (;;) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ seq: string; envelope: string }>(
        `SELECT seq, envelope FROM ${plain} WHERE sent_at IS NULL ORDER BY seq LIMIT $1
         FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      if (rows.length === 0) {
        await client.query('COMMIT');
        return;
      }
      await transport.publish(
        rows.map((r) => {
          const envelope = decodeEnvelope(r.envelope);
          return { envelope, dedupeKey: envelope.id };
        }),
      );
      await client.query(`UPDATE ${plain} SET sent_at = now() WHERE seq = ANY($1::bigint[])`, [
        rows.map((r) => r.seq),
      ]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }
}

async function handwrittenRound(loops: number) {
  await fill((client, e) =>
    client.query(`INSERT INTO ${plain} (id, ordering_key, envelope) VALUES ($1, $2, $3)`, [
      e.id,
      e.key,
      encodeEnvelope(e),
    ]),
  );
  await purger.purgeQueue(queue);
  return measure(`hand-written x${loops}`, EVENTS, async () => {
    await Promise.all(Array.from({ length: loops }, handwrittenLoop));
  });
}

try {
  await transport.publish(benchEnvelopes(1).map((envelope) => ({ envelope }))); // connect, declare
  const rows = [];
  for (const loops of LOOPS) {
    const [ours, raw] = await interleaved(ROUNDS, [
      () => dispatcherRound(loops),
      () => handwrittenRound(loops),
    ]);
    if (!ours || !raw) throw new Error('no rounds');
    rows.push({ name: `outbox dispatch, ${loops} at once`, ours, raw, aim: 0.8 });
  }
  printComparisons(
    `Outbox → RabbitMQ: events/s, ${EVENTS} per round, batches of ${BATCH}, median of ${ROUNDS} (raw = hand-written SKIP LOCKED loop)`,
    rows,
  );
} finally {
  await transport.close();
  await amqpConn.close();
  await deleteRabbitMqQueues({ queue });
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
}
