import type { ErrorInfo } from '@onceflow/core';
import type { DatabaseHandle } from '../database.js';

/** A message row to insert. */
export interface MessageRow {
  readonly dedupeKey: string;
  readonly orderingKey: string | undefined;
  /** Wire format v1 text. */
  readonly envelope: string;
}

/** A message just leased to this process. */
export interface ClaimedMessage {
  readonly seq: number;
  readonly envelope: string;
  readonly attempt: number;
  readonly token: string;
  readonly lockedUntil: number;
}

/**
 * A message is handed out when it is queued, visible, and — when it has an ordering key — no
 * other queued message of the same key is earlier in publish order or holds a live lease. So a
 * key's messages go one at a time in publish order; a retried message blocks its key until it is
 * acked (head-of-line, as SQS FIFO message groups).
 */
const CLAIM_SQL = `
  UPDATE onceflow_messages
  SET attempt = attempt + 1, lease_token = lower(hex(randomblob(16))), visible_at = :lockedUntil
  WHERE seq IN (
    SELECT m.seq FROM onceflow_messages m
    WHERE m.queue = :queue AND m.state = 'queued' AND m.visible_at <= :now
      AND (m.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM onceflow_messages e
        WHERE e.queue = m.queue AND e.ordering_key = m.ordering_key AND e.state = 'queued'
          AND e.seq <> m.seq
          AND (e.seq < m.seq OR (e.lease_token IS NOT NULL AND e.visible_at > :now))))
    ORDER BY m.visible_at, m.seq
    LIMIT :limit)
  RETURNING seq, envelope, attempt, lease_token AS token, visible_at AS lockedUntil`;

/** The row is still leased to this token and the lease has not expired (expired is lost). */
const OWNED = `seq = ? AND lease_token = ? AND state = 'queued' AND visible_at > ?`;

/** Dedupe tombstones deleted per statement by `sweep`. */
const SWEEP_BATCH = 1_000;

/**
 * The SQL of one queue's messages. Every method that changes a row is a single statement or one
 * IMMEDIATE transaction, so across processes sharing the file a message is leased by at most one
 * holder, and a settlement or extension only takes effect while its lease is live: the token
 * still owns the row and the lease has not expired (from then on any process may take it).
 */
export function createMessageStore(handle: DatabaseHandle, queue: string) {
  const settled = (changes: number): boolean => changes === 1;
  return {
    /**
     * Inserts in order in one transaction; a dedupe key already present is skipped. Returns how
     * many were new. Waits for another process's write lock only `publishTimeoutMs`.
     */
    publish(rows: readonly MessageRow[]): number {
      return handle.immediate(() => {
        const now = Date.now();
        const insert = handle.stmt(
          `INSERT INTO onceflow_messages
             (queue, dedupe_key, ordering_key, envelope, state, visible_at, published_at)
           VALUES (?, ?, ?, ?, 'queued', ?, ?) ON CONFLICT (queue, dedupe_key) DO NOTHING`,
        );
        let added = 0;
        for (const r of rows) {
          added += insert.run(
            queue,
            r.dedupeKey,
            r.orderingKey ?? null,
            r.envelope,
            now,
            now,
          ).changes;
        }
        return added;
      }, handle.receiveWaitMs);
    },

    /** Leases up to `limit` messages for `lockMs`, oldest visible first. */
    claim(limit: number, lockMs: number): ClaimedMessage[] {
      const now = Date.now();
      const rows = handle.immediate(
        () =>
          handle
            .stmt(CLAIM_SQL)
            .all({ queue, now, lockedUntil: now + lockMs, limit }) as ClaimedMessage[],
      );
      return rows.sort((a, b) => a.seq - b.seq);
    },

    /** When the next queued message becomes visible (ms epoch), without taking the write lock. */
    nextVisibleAt(): number | undefined {
      const row = handle
        .stmt(
          `SELECT min(visible_at) AS at FROM onceflow_messages WHERE queue = ? AND state = 'queued'`,
        )
        .get(queue) as { at: number | null };
      return row.at ?? undefined;
    },

    /**
     * Queued messages by state: visible (an expired lease included: it is deliverable again),
     * leased, or waiting out a retry delay. One read over the queue's part of the ready index.
     */
    backlog(): { ready: number; delayed: number; inFlight: number } {
      const row = handle
        .stmt(
          `SELECT coalesce(sum(visible_at <= :now), 0) AS ready,
             coalesce(sum(visible_at > :now AND lease_token IS NULL), 0) AS delayed,
             coalesce(sum(visible_at > :now AND lease_token IS NOT NULL), 0) AS inFlight
           FROM onceflow_messages WHERE queue = :queue AND state = 'queued'`,
        )
        .get({ queue, now: Date.now() }) as { ready: number; delayed: number; inFlight: number };
      return row;
    },

    ack(seq: number, token: string): boolean {
      return settled(
        handle
          .stmt(
            `UPDATE onceflow_messages SET state = 'done', done_at = ?, envelope = NULL,
               lease_token = NULL, last_error = NULL WHERE ${OWNED}`,
          )
          .run(Date.now(), seq, token, Date.now()).changes,
      );
    },

    retry(seq: number, token: string, delayMs: number, error?: ErrorInfo): boolean {
      const now = Date.now();
      return settled(
        handle
          .stmt(
            `UPDATE onceflow_messages SET visible_at = ?, lease_token = NULL,
               last_error = coalesce(?, last_error) WHERE ${OWNED}`,
          )
          .run(now + delayMs, error ? JSON.stringify(error) : null, seq, token, now).changes,
      );
    },

    /** Moves the lease expiry to `ms` from now. Returns the new expiry, or undefined if the lease is lost. */
    extend(seq: number, token: string, ms: number): number | undefined {
      const until = Date.now() + ms;
      const changes = handle
        .stmt(`UPDATE onceflow_messages SET visible_at = ? WHERE ${OWNED}`)
        .run(until, seq, token, until - ms).changes;
      return changes === 1 ? until : undefined;
    },

    /** Deletes dedupe tombstones older than the window. Returns how many. */
    sweep(windowMs: number): number {
      if (!Number.isFinite(windowMs)) return 0;
      // A batch per statement, so a long backlog of tombstones never holds the write lock long.
      const batch = handle.stmt(
        `DELETE FROM onceflow_messages WHERE seq IN (
           SELECT seq FROM onceflow_messages
           WHERE queue = ? AND state = 'done' AND done_at < ? LIMIT ?)`,
      );
      const cutoff = Date.now() - windowMs;
      let deleted = 0;
      for (;;) {
        const { changes } = batch.run(queue, cutoff, SWEEP_BATCH);
        deleted += changes;
        if (changes < SWEEP_BATCH) return deleted;
      }
    },
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;
