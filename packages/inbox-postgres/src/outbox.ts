import { randomUUID } from 'node:crypto';
import { type OutboxEvent, type OutboxStore, UsageError } from '@onceflow/core';
import {
  decodeEnvelope,
  encodeEnvelope,
  outboxEnvelope,
  parseConfig,
  type SameFields,
} from '@onceflow/core/kit';
import type { ClientBase, Pool } from 'pg';
import { z } from 'zod';
import { exec } from './exec.js';
import {
  DEFAULT_SCHEMA,
  DEFAULT_TABLE,
  identifierSchema,
  inboxNames,
  tableNameSchema,
} from './names.js';
import { outboxStatements } from './outbox-sql.js';

const isPool = (v: unknown): v is Pool =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<Pool>).query === 'function' &&
  typeof (v as Partial<Pool>).connect === 'function';

const configSchema = z.object({
  pool: z.custom<Pool>(isPool, 'pool must be a pg.Pool'),
  schema: identifierSchema.default(DEFAULT_SCHEMA),
  table: tableNameSchema.default(DEFAULT_TABLE),
});

/** Configuration of `createPostgresOutbox`. */
export interface PostgresOutboxConfig {
  /** The pool the dispatcher's statements run on. Yours: the outbox never ends it. */
  readonly pool: Pool;
  /** Default `public`. */
  readonly schema?: string | undefined;
  /** The inbox table the outbox sits beside (`<table>_outbox`). Default `onceflow_inbox`. */
  readonly table?: string | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof configSchema>, PostgresOutboxConfig> = true;

/**
 * The transactional outbox in PostgreSQL: `add` writes an event in your transaction; the
 * dispatcher (`createOutboxDispatcher` from `@onceflow/core`) publishes it after commit.
 */
export interface PostgresOutbox extends OutboxStore {
  /**
   * Adds `event` inside the transaction `client` has open, and resolves with its event id
   * (`event.id`, or a random UUID chosen now and kept across every re-send). Nothing is published
   * unless that transaction commits. A caller-given id added twice is sent twice (the worker's
   * record guard runs it once). Rejects with
   * `UsageError` for a pool (use the client of your transaction) or an invalid event, with
   * `StoreUnavailableError` when PostgreSQL fails (roll back).
   */
  add(client: ClientBase, event: OutboxEvent): Promise<string>;
  /** `"schema"."table_outbox"`. */
  readonly table: string;
}

/**
 * Creates the outbox beside the inbox table of `migrate(pool, { schema, table })`. No I/O here.
 *
 * @example
 * const outbox = createPostgresOutbox({ pool });
 * await client.query('BEGIN');
 * await client.query('UPDATE orders SET paid = true WHERE id = $1', [orderId]);
 * await outbox.add(client, { source: 'orders', type: 'order.paid', key: orderId, payload: { orderId } });
 * await client.query('COMMIT');
 */
export function createPostgresOutbox(config: PostgresOutboxConfig): PostgresOutbox {
  const { pool, schema, table } = parseConfig('postgres outbox config', configSchema, config);
  const names = inboxNames(schema, table);
  const s = outboxStatements(names);

  return {
    table: names.sibling('outbox'),
    async add(client, event) {
      if (isPool(client) && 'totalCount' in client) {
        throw new UsageError(
          'outbox.add: pass the pg client of your open transaction, not a pool (a pool runs the insert on its own, outside your transaction)',
        );
      }
      const envelope = outboxEnvelope(event);
      const values = [envelope.source, envelope.id, envelope.key ?? null, encodeEnvelope(envelope)];
      await exec(client, s.add, values, 'outbox add');
      return envelope.id;
    },
    async lease({ limit, leaseMs }) {
      const token = randomUUID();
      const { rows } = await exec<{ seq: number; envelope: string; attempts: number }>(
        pool,
        s.lease,
        [token, leaseMs, limit],
        'outbox lease',
      );
      rows.sort((a, b) => a.seq - b.seq);
      return {
        token,
        rows: rows.map((r) => ({
          seq: r.seq,
          envelope: decodeEnvelope(r.envelope),
          attempts: r.attempts,
        })),
      };
    },
    async markSent(token, seqs) {
      if (seqs.length === 0) return;
      await exec(pool, s.markSent, [token, seqs], 'outbox markSent');
    },
    async reschedule(token, seqs, { delayMs, error }) {
      if (seqs.length === 0) return;
      const values = [token, seqs, delayMs, error === undefined ? null : JSON.stringify(error)];
      await exec(pool, s.reschedule, values, 'outbox reschedule');
    },
    async purgeSent({ olderThanMs, limit }) {
      const res = await exec(pool, s.purgeSent, [olderThanMs, limit], 'outbox purgeSent');
      return res.rowCount ?? 0;
    },
    async stats() {
      const { rows } = await exec<{ unsent: number; age_ms: number }>(
        pool,
        s.stats,
        [],
        'outbox stats',
      );
      const row = rows[0];
      return { unsent: row?.unsent ?? 0, oldestUnsentAgeMs: Math.max(0, row?.age_ms ?? 0) };
    },
  };
}
