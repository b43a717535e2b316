import type { Inbox, OutboxStore, RecordStore, Transport } from '@onceflow/core';
import {
  createPostgresInbox,
  createPostgresOutbox,
  markProcessed,
  migrate,
} from '@onceflow/inbox-postgres';
import pg from 'pg';
import type { Ledger, Stack, StackOptions } from '../stack.js';

/** The stores every broker stack shares: inbox, event record and ledger in PostgreSQL. */
export interface PostgresStores {
  readonly inbox: Inbox;
  readonly records: RecordStore;
  readonly ledger: Ledger;
  readonly outbox: OutboxStore;
  /** Ends the pool; the run's owner also drops the run's schema. */
  close(): Promise<void>;
}

export const demoPgUrl = (): string =>
  process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Opens the run's schema (`demo_<runId>`, created on first use) with the inbox table and a ledger
 * table that has NO unique constraint on the event id. `record` writes the ledger row and the
 * processed mark in one transaction, and the outbound event in the outbox beside them.
 */
export async function openPostgresStores(options: StackOptions): Promise<PostgresStores> {
  const pool = new pg.Pool({ connectionString: demoPgUrl(), max: 8 });
  const schema = `demo_${options.runId}`;
  await migrate(pool, { schema });
  await pool.query(`CREATE TABLE IF NOT EXISTS "${schema}".demo_ledger (
    row_id BIGSERIAL PRIMARY KEY,
    event_id TEXT NOT NULL, source TEXT NOT NULL, type TEXT NOT NULL,
    amount BIGINT, charge_id TEXT NOT NULL, written_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
  const store = createPostgresInbox({ pool, schema });
  const outbox = createPostgresOutbox({ pool, schema });

  const ledger: Ledger = {
    async record(ctx, entry) {
      const { envelope } = ctx;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await markProcessed(client, ctx, { schema });
        await client.query(
          `INSERT INTO "${schema}".demo_ledger (event_id, source, type, amount, charge_id) VALUES ($1, $2, $3, $4, $5)`,
          [envelope.id, envelope.source, envelope.type, entry.amount, entry.chargeId],
        );
        if (entry.outbound) await outbox.add(client, entry.outbound);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async rowsByEvent() {
      const { rows } = await pool.query<{ id: string; n: string }>(
        `SELECT event_id AS id, COUNT(*) AS n FROM "${schema}".demo_ledger GROUP BY event_id`,
      );
      return new Map(rows.map((r) => [r.id, Number(r.n)]));
    },
  };

  return {
    inbox: store,
    records: store,
    ledger,
    outbox,
    async close() {
      if (options.owner) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/**
 * A broker's stack on the PostgreSQL stores. `close` closes the transport, lets the run's owner
 * `remove` what the run created on the broker, then `release`s clients and closes the stores,
 * whatever failed before.
 */
export function stackOnPostgres(parts: {
  readonly broker: string;
  readonly options: StackOptions;
  readonly stores: PostgresStores;
  readonly transport: Transport;
  /** The receiver's inbox when it is not the PostgreSQL one. */
  readonly inbox?: Inbox;
  readonly remove: () => Promise<void>;
  readonly release?: () => Promise<void>;
}): Stack {
  const { broker, options, stores, transport } = parts;
  return {
    broker,
    inbox: parts.inbox ?? stores.inbox,
    records: stores.records,
    transport,
    ledger: stores.ledger,
    outbox: stores.outbox,
    async close() {
      try {
        await transport.close();
        if (options.owner) await parts.remove();
      } finally {
        await parts.release?.();
        await stores.close();
      }
    },
  };
}
