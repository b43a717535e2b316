import { randomUUID } from 'node:crypto';
import { type OutboxEvent, type OutboxStore, UsageError } from '@onceflow/core';
import { decodeEnvelope, encodeEnvelope, outboxEnvelope } from '@onceflow/core/kit';
import type { Database, Statement } from 'better-sqlite3';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';

/** In the caller's transaction. */
const ADD_SQL = `INSERT INTO onceflow_outbox (source, id, ordering_key, envelope, created_at, available_at)
  VALUES (@source, @id, @key, @envelope, @now, @now)`;

/**
 * The due heads (unsent rows with no earlier unsent row of their key), leased in one statement:
 * SQLite runs one writer at a time, so two dispatchers never take the same row, and a head under
 * a live lease keeps every later row of its key out.
 */
const LEASE_SQL = `UPDATE onceflow_outbox SET lease_token = @token, available_at = @until,
    attempts = attempts + 1
  WHERE seq IN (
    SELECT c.seq FROM onceflow_outbox c
    WHERE c.sent_at IS NULL AND c.available_at <= @now
      AND (c.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM onceflow_outbox e
        WHERE e.ordering_key = c.ordering_key AND e.sent_at IS NULL AND e.seq < c.seq))
    ORDER BY c.seq LIMIT @limit)
  RETURNING seq, envelope, attempts`;

/** Only rows the lease still owns: one that expired and was re-leased is the new owner's. */
const SENT_SQL = `UPDATE onceflow_outbox SET sent_at = @now, lease_token = NULL
  WHERE seq IN (SELECT value FROM json_each(@seqs)) AND lease_token = @token AND sent_at IS NULL`;

const RETRY_SQL = `UPDATE onceflow_outbox SET lease_token = NULL, available_at = @at,
    last_error = coalesce(@error, last_error)
  WHERE seq IN (SELECT value FROM json_each(@seqs)) AND lease_token = @token AND sent_at IS NULL`;

const PURGE_SQL = `DELETE FROM onceflow_outbox WHERE seq IN (
  SELECT seq FROM onceflow_outbox WHERE sent_at < @before ORDER BY sent_at LIMIT @limit)`;

const STATS_SQL = `SELECT count(*) AS unsent, min(created_at) AS oldest
  FROM onceflow_outbox WHERE sent_at IS NULL`;

/**
 * The transactional outbox in the embedded file: `add` writes an event in your better-sqlite3
 * transaction; the dispatcher (`createOutboxDispatcher` from `@onceflow/core`) publishes it after
 * commit. Several processes may dispatch from one file.
 */
export interface EmbeddedOutbox extends OutboxStore {
  /**
   * Adds `event` inside the transaction open on `db` (any connection to the embedded file), and
   * returns its event id (`event.id`, or a random UUID chosen now and kept across every re-send).
   * Synchronous, like the transaction. Nothing is published unless the transaction commits. A
   * caller-given id added twice is sent twice (the worker's record guard runs it once). Throws `UsageError` outside a transaction, on a file
   * without the onceflow tables, or for an invalid event.
   */
  add(db: Database, event: OutboxEvent): string;
}

const addStatements = new WeakMap<Database, Statement>();

function addStatement(db: Database): Statement {
  let s = addStatements.get(db);
  if (!s) {
    try {
      s = db.prepare(ADD_SQL);
    } catch (err) {
      throw new UsageError(
        `outbox.add: the database has no onceflow outbox (${(err as Error).message}): pass embedded.db, or open the file with createEmbedded().start() or applyMigrations(db) first`,
      );
    }
    addStatements.set(db, s);
  }
  return s;
}

export function createEmbeddedOutbox(handle: DatabaseHandle): EmbeddedOutbox {
  return {
    add(db, event) {
      if (!db.inTransaction) {
        throw new UsageError(
          'outbox.add must run inside a transaction on the db: call it in db.transaction(...).immediate()',
        );
      }
      const envelope = outboxEnvelope(event);
      addStatement(db).run({
        source: envelope.source,
        id: envelope.id,
        key: envelope.key ?? null,
        envelope: encodeEnvelope(envelope),
        now: Date.now(),
      });
      return envelope.id;
    },
    lease: ({ limit, leaseMs }) =>
      asStore('outbox lease', () => {
        const token = randomUUID();
        const now = Date.now();
        const rows = handle.stmt(LEASE_SQL).all({ token, now, until: now + leaseMs, limit }) as {
          seq: number;
          envelope: string;
          attempts: number;
        }[];
        rows.sort((a, b) => a.seq - b.seq);
        return {
          token,
          rows: rows.map((r) => ({
            seq: r.seq,
            envelope: decodeEnvelope(r.envelope),
            attempts: r.attempts,
          })),
        };
      }),
    markSent: (token, seqs) =>
      asStore('outbox markSent', () => {
        if (seqs.length === 0) return;
        handle.stmt(SENT_SQL).run({ token, seqs: JSON.stringify(seqs), now: Date.now() });
      }),
    reschedule: (token, seqs, { delayMs, error }) =>
      asStore('outbox reschedule', () => {
        if (seqs.length === 0) return;
        handle.stmt(RETRY_SQL).run({
          token,
          seqs: JSON.stringify(seqs),
          at: Date.now() + delayMs,
          error: error === undefined ? null : JSON.stringify(error),
        });
      }),
    purgeSent: ({ olderThanMs, limit }) =>
      asStore(
        'outbox purgeSent',
        () => handle.stmt(PURGE_SQL).run({ before: Date.now() - olderThanMs, limit }).changes,
      ),
    stats: () =>
      asStore('outbox stats', () => {
        const row = handle.stmt(STATS_SQL).get() as { unsent: number; oldest: number | null };
        return {
          unsent: row.unsent,
          oldestUnsentAgeMs: row.oldest === null ? 0 : Math.max(0, Date.now() - row.oldest),
        };
      }),
  };
}
