import { join } from 'node:path';
import {
  createLogger,
  type HandlerContext,
  type Inbox,
  type RecordStore,
  type Transport,
} from '@onceflow/core';
import { createEmbedded, markProcessedInTransaction } from '@onceflow/embedded';
import {
  createPostgresInbox,
  markProcessed,
  migrate,
  withTransaction,
} from '@onceflow/inbox-postgres';
import pg from 'pg';

export const STACKS = ['embedded', 'rabbitmq', 'bullmq', 'kafka', 'sqs'] as const;
export type StackName = (typeof STACKS)[number];

/**
 * `helper`: the effect and the processed mark in one transaction (the same-transaction helper of
 * the store). `plain`: the effect is written on its own and the worker records the outcome after
 * the handler returns, so a crash between the two doubles the effect (at-least-once).
 */
export type HandlerMode = 'helper' | 'plain';

/** Where one run's stack lives; passed to every child process as JSON in `CHAOS_STACK`. */
export interface StackSpec {
  readonly stack: StackName;
  readonly runId: string;
  /** The embedded stack's SQLite file. */
  readonly file: string;
  readonly pgUrl: string;
  /** The harness's own broker: AMQP URL, Redis URL, Kafka bootstrap address or SQS endpoint. */
  readonly brokerUrl: string;
  readonly lockMs: number;
  /** Broker dedupe window asked of transports that take one (BullMQ, embedded). */
  readonly dedupeWindowMs: number;
}

/** One ledger row per effect; no unique constraint, so a doubled effect shows as two rows. */
export interface LedgerRow {
  readonly id: string;
  readonly rows: number;
  /** ms since the epoch of the first row. */
  readonly firstAt: number;
}

export interface Ledger {
  /** Writes the effect, in `mode`. */
  write(ctx: HandlerContext, mode: HandlerMode): Promise<void>;
  rows(): Promise<LedgerRow[]>;
}

export interface OpenStack {
  readonly inbox: Inbox;
  readonly records: RecordStore;
  readonly transport: Transport;
  readonly ledger: Ledger;
  close(): Promise<void>;
  /** Removes what the run created in the shared PostgreSQL (owner only). */
  drop(): Promise<void>;
}

const quiet = () => createLogger({ level: 'fatal' });

/**
 * The stack's transport. Each adapter is imported only by the stack that uses it: every receiver
 * and worker process the harness replaces starts faster without the other three clients.
 */
async function transportFor(spec: StackSpec): Promise<Transport> {
  const queue = `chaos-${spec.runId}`;
  switch (spec.stack) {
    case 'rabbitmq': {
      const { createRabbitMqTransport } = await import('@onceflow/adapter-rabbitmq');
      return createRabbitMqTransport({
        url: spec.brokerUrl,
        queue,
        lockMs: spec.lockMs,
        logger: quiet(),
      });
    }
    case 'bullmq': {
      const { createBullmqTransport } = await import('@onceflow/adapter-bullmq');
      return createBullmqTransport({
        url: spec.brokerUrl,
        queue,
        lockMs: spec.lockMs,
        dedupeWindowMs: spec.dedupeWindowMs,
        logger: quiet(),
      });
    }
    case 'kafka': {
      const { createKafkaTransport } = await import('@onceflow/adapter-kafka');
      return createKafkaTransport({
        brokers: [spec.brokerUrl],
        topic: queue,
        partitions: 4,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
        lockMs: spec.lockMs,
        fetchWaitMs: 200,
        logger: quiet(),
      });
    }
    case 'sqs': {
      // A FIFO queue: SQS's own dedupe (5 minutes) on the receiver's dedupe key.
      const { createSqsTransport } = await import('@onceflow/adapter-sqs');
      return createSqsTransport({
        queue,
        fifo: true,
        clientConfig: {
          endpoint: spec.brokerUrl,
          region: 'us-east-1',
          credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' }, // ignored by ElasticMQ
        },
        lockMs: spec.lockMs,
        // Short polls: a worker asked to stop waits for its open poll.
        waitTimeSeconds: 1,
        logger: quiet(),
      });
    }
    case 'embedded':
      throw new Error('the embedded stack opens its transport from its file');
  }
}

async function embeddedStack(spec: StackSpec): Promise<OpenStack> {
  const embedded = createEmbedded({ path: spec.file });
  await embedded.start();
  const db = embedded.db;
  db.exec(`CREATE TABLE IF NOT EXISTS chaos_ledger (
    row_id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, written_at INTEGER NOT NULL)`);
  const insert = db.prepare('INSERT INTO chaos_ledger (event_id, written_at) VALUES (?, ?)');
  const inTransaction = db.transaction((ctx: HandlerContext) => {
    insert.run(ctx.envelope.id, Date.now());
    markProcessedInTransaction(db, ctx);
  });
  return {
    inbox: embedded.inbox,
    records: embedded.records,
    transport: embedded.transport(`chaos-${spec.runId}`, {
      lockMs: spec.lockMs,
      dedupeWindowMs: spec.dedupeWindowMs,
    }),
    ledger: {
      async write(ctx, mode) {
        if (mode === 'helper') inTransaction.immediate(ctx);
        else insert.run(ctx.envelope.id, Date.now());
      },
      async rows() {
        return db
          .prepare(
            `SELECT event_id AS id, COUNT(*) AS rows, MIN(written_at) AS firstAt
             FROM chaos_ledger GROUP BY event_id`,
          )
          .all() as LedgerRow[];
      },
    },
    close: () => embedded.close(),
    drop: async () => {},
  };
}

async function postgresStack(spec: StackSpec): Promise<OpenStack> {
  const pool = new pg.Pool({ connectionString: spec.pgUrl, max: 6 });
  // A pool whose server restarts or drops a connection must not crash the process.
  pool.on('error', () => {});
  const schema = `chaos_${spec.runId}`;
  await migrate(pool, { schema });
  const ledgerTable = `"${schema}".chaos_ledger`;
  await pool.query(`CREATE TABLE IF NOT EXISTS ${ledgerTable} (
    row_id BIGSERIAL PRIMARY KEY, event_id TEXT NOT NULL, written_at BIGINT NOT NULL)`);
  const store = createPostgresInbox({ pool, schema });
  const insert = `INSERT INTO ${ledgerTable} (event_id, written_at) VALUES ($1, $2)`;
  const transport = await transportFor(spec);
  return {
    inbox: store,
    records: store,
    transport,
    ledger: {
      async write(ctx, mode) {
        if (mode === 'plain') {
          await pool.query(insert, [ctx.envelope.id, Date.now()]);
          return;
        }
        await withTransaction(pool, async (client) => {
          await client.query(insert, [ctx.envelope.id, Date.now()]);
          await markProcessed(client, ctx, { schema });
        });
      },
      async rows() {
        const { rows } = await pool.query<{ id: string; rows: string; first_at: string }>(
          `SELECT event_id AS id, COUNT(*) AS rows, MIN(written_at) AS first_at
           FROM ${ledgerTable} GROUP BY event_id`,
        );
        return rows.map((r) => ({ id: r.id, rows: Number(r.rows), firstAt: Number(r.first_at) }));
      },
    },
    async close() {
      try {
        await transport.close();
      } finally {
        await pool.end();
      }
    },
    async drop() {
      const admin = new pg.Client({ connectionString: spec.pgUrl });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Opens the run's stores and transport (each process opens its own). */
export function openStack(spec: StackSpec): Promise<OpenStack> {
  return spec.stack === 'embedded' ? embeddedStack(spec) : postgresStack(spec);
}

export const embeddedFile = (dir: string) => join(dir, 'chaos.db');

/** Reads `CHAOS_STACK` in a child process. */
export function specFromEnv(): StackSpec {
  const raw = process.env.CHAOS_STACK;
  if (!raw) throw new Error('CHAOS_STACK is not set');
  return JSON.parse(raw) as StackSpec;
}
