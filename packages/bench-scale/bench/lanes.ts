/**
 * One "lane" per broker: a queue (or topic) and the processed-guard store a worker on that broker
 * normally runs with. The same description is used by the bench (which creates the lane, fills it
 * and removes it) and by every worker process (which opens its own transport and store on it), so
 * the scaling bench is one driver for every broker.
 *
 * - rabbitmq: a quorum queue on $ONCEFLOW_AMQP_URL, guard = the PostgreSQL event record
 * - kafka: a topic of `partitions` partitions on $ONCEFLOW_KAFKA_BROKERS, guard = PostgreSQL
 * - embedded: a queue in one SQLite file, guard = the same file's event record (its default)
 */
import { publishAll, benchEnvelopes } from '@onceflow/conformance/bench';
import type { RecordStore, TopologySetup, Transport } from '@onceflow/core';
import { createKafkaTransport, removeKafkaTopology } from '@onceflow/adapter-kafka';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import { createEmbedded } from '@onceflow/embedded';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';

export const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type Broker = 'rabbitmq' | 'kafka' | 'embedded';

export interface Lane {
  readonly broker: Broker;
  /** Queue or topic name, unique to the run and configuration. */
  readonly name: string;
  /** Kafka only: partitions of the work topic. */
  readonly partitions?: number;
  /** PostgreSQL schema of the guard (rabbitmq, kafka). */
  readonly pgSchema?: string;
  /** SQLite file (embedded). */
  readonly sqlitePath?: string;
}

/** What a worker process runs on: the lane's transport and guard store, and how to close both. */
export interface WorkerSide {
  readonly transport: Transport;
  readonly records: RecordStore;
  /** The guard's pool, when it has one (its backends' CPU is measured). */
  readonly pool?: pg.Pool;
  close(): Promise<void>;
}

/** The Kafka transport with the options every process of a lane shares. */
const kafkaTransport = (lane: Lane) =>
  createKafkaTransport({
    topic: lane.name,
    partitions: lane.partitions ?? 1,
    fetchWaitMs: 100,
    publishTimeoutMs: 60_000, // throughput on a loaded machine, not the deadline
  });

function brokerTransport(lane: Lane): Transport & TopologySetup {
  if (lane.broker === 'rabbitmq')
    return createRabbitMqTransport({ queue: lane.name, publishTimeoutMs: 60_000 });
  if (lane.broker === 'kafka') return kafkaTransport(lane);
  throw new Error(`no broker transport for ${lane.broker}`);
}

/** Opens the lane in a worker process: transport started, guard store ready, its pool warmed. */
export async function openWorkerSide(
  lane: Lane,
  options: { readonly poolMax: number; readonly applicationName: string },
): Promise<WorkerSide> {
  if (lane.broker === 'embedded') {
    const embedded = createEmbedded({ path: required(lane.sqlitePath, 'sqlitePath') });
    await embedded.start();
    const transport = embedded.transport(lane.name);
    await transport.start();
    return {
      transport,
      records: embedded.records,
      async close() {
        await transport.close();
        await embedded.close();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: PG_URL,
    max: options.poolMax,
    application_name: options.applicationName,
    idleTimeoutMillis: 0, // keep the backends for the whole run: their CPU is measured
  });
  pool.on('error', () => undefined);
  // Open every connection now, so the measured stretch neither pays for them nor misses a backend.
  await Promise.all(Array.from({ length: options.poolMax }, () => pool.query('SELECT 1')));
  const records = createPostgresInbox({ pool, schema: required(lane.pgSchema, 'pgSchema') });
  const transport = brokerTransport(lane);
  await transport.start();
  return {
    transport,
    records,
    pool,
    async close() {
      await transport.close();
      await pool.end();
    },
  };
}

/** Creates the lane's topology and guard schema, and publishes `count` bench envelopes to it. */
export async function fillLane(lane: Lane, count: number, admin: pg.Pool): Promise<void> {
  if (lane.pgSchema) {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${lane.pgSchema}"`);
    await migrate(admin, { schema: lane.pgSchema });
  }
  if (lane.broker === 'embedded') {
    const embedded = createEmbedded({
      path: required(lane.sqlitePath, 'sqlitePath'),
      synchronous: 'normal', // filling only: the workers open the file with the default ('full')
      publishTimeoutMs: 60_000,
    });
    await embedded.start();
    const transport = embedded.transport(lane.name);
    await transport.start();
    await publishAll(transport, benchEnvelopes(count), 100, 4);
    await transport.close();
    await embedded.close();
    return;
  }
  const transport = brokerTransport(lane);
  await transport.start();
  await publishAll(transport, benchEnvelopes(count), lane.broker === 'kafka' ? 50 : 100, 4);
  await transport.close();
}

/** Removes the lane's queue or topics and guard schema (the SQLite file is the caller's). */
export async function removeLane(lane: Lane, admin: pg.Pool): Promise<void> {
  if (lane.pgSchema) await admin.query(`DROP SCHEMA IF EXISTS "${lane.pgSchema}" CASCADE`);
  if (lane.broker === 'rabbitmq') await deleteRabbitMqQueues({ queue: lane.name });
  if (lane.broker === 'kafka') await removeKafkaTopology({ topic: lane.name });
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`lane: ${name} is required`);
  return value;
}
