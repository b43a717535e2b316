import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import type { BacklogProbe, Inbox, RecordStore, Transport } from '@onceflow/core';
import { createEmbedded } from '@onceflow/embedded';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';

export type StackName = 'embedded' | 'postgres+rabbitmq';

export interface Stack {
  readonly records: RecordStore;
  readonly inbox: Inbox;
  readonly transport: Transport & BacklogProbe;
  close(): Promise<void>;
}

/**
 * The stores and transport the console is tested over: the embedded default (one SQLite file),
 * or PostgreSQL (the shared server, a schema of this run's own) with RabbitMQ (a queue of its own).
 */
export async function openStack(name: StackName): Promise<Stack> {
  if (name === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-console-'));
    const embedded = createEmbedded({ path: join(dir, 'onceflow.db'), pollIntervalMs: 20 });
    await embedded.start();
    return {
      records: embedded.records,
      inbox: embedded.inbox,
      transport: embedded.transport('orders', { lockMs: 2000 }),
      async close() {
        await embedded.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const run = randomBytes(4).toString('hex');
  const pool = new pg.Pool({
    connectionString: process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    max: 4,
  });
  const schema = `console_${run}`;
  await migrate(pool, { schema });
  const store = createPostgresInbox({ pool, schema });
  const queue = `onceflow-console-${run}`;
  const transport = createRabbitMqTransport({ queue, lockMs: 5000 });
  return {
    records: store,
    inbox: store,
    transport,
    async close() {
      await transport.close();
      await deleteRabbitMqQueues({ queue });
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
