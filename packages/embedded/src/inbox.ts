import { randomUUID } from 'node:crypto';
import type { ClaimResult, Envelope, Inbox, InboxStats, StaleClaim } from '@onceflow/core';
import { decodeEnvelope, encodeEnvelope } from '@onceflow/core/kit';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';

interface ExistingRow {
  payload_hash: string | null;
  state: 'pending' | 'enqueued' | null;
  claim_expires_at: number | null;
  processed_at: number | null;
}

const toMs = (iso: string): number => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : Date.now();
};

/**
 * The SQLite inbox. Every method is one IMMEDIATE transaction on the shared file, so `claim` is
 * atomic across every process using the file: of concurrent claims of one (source, id) exactly
 * one gets `new`. Rows known only to the processed-guard (events that never passed a receiver)
 * become inbox rows on their first claim, or answer `duplicate` once processed.
 *
 * A pending row the worker already processed (the process died between publish and
 * `markEnqueued`) answers `duplicate` and is not handed to the relay.
 *
 * Retention: `purge` deletes enqueued and processed rows received before `olderThan` (never an
 * unprocessed pending row, never a row whose processing lease is live) and conflict records seen
 * before it; it returns the number of event rows deleted. `stats().processed` counts every
 * processed event, with or without an inbox claim.
 */
export function createSqliteInbox(handle: DatabaseHandle): Inbox {
  const claim = (envelope: Envelope, leaseMs: number): ClaimResult =>
    handle.immediate(() => {
      const now = Date.now();
      const token = randomUUID();
      const fresh = [envelope.payloadHash, encodeEnvelope(envelope), toMs(envelope.receivedAt)];
      const lease = [now, token, now + leaseMs];
      const inserted = handle
        .stmt(
          `INSERT INTO onceflow_inbox (source, id, payload_hash, envelope, state, received_at,
             claimed_at, claim_token, claim_expires_at)
           VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(envelope.source, envelope.id, ...fresh, ...lease);
      if (inserted.changes === 1) return { status: 'new', token };
      const row = handle
        .stmt(
          `SELECT payload_hash, state, claim_expires_at, processed_at
           FROM onceflow_inbox WHERE source = ? AND id = ?`,
        )
        .get(envelope.source, envelope.id) as ExistingRow;
      if (row.state === null) {
        if (row.processed_at !== null) return { status: 'duplicate' };
        handle
          .stmt(
            `UPDATE onceflow_inbox SET payload_hash = ?, envelope = ?, state = 'pending',
               received_at = ?, claimed_at = ?, claim_token = ?, claim_expires_at = ?
             WHERE source = ? AND id = ?`,
          )
          .run(...fresh, ...lease, envelope.source, envelope.id);
        return { status: 'new', token };
      }
      if (row.payload_hash !== envelope.payloadHash) {
        return { status: 'conflict', existingHash: row.payload_hash ?? '' };
      }
      if (row.state === 'enqueued' || row.processed_at !== null) return { status: 'duplicate' };
      if ((row.claim_expires_at ?? 0) > now) return { status: 'in-flight' };
      handle
        .stmt(
          `UPDATE onceflow_inbox SET claim_token = ?, claim_expires_at = ?
           WHERE source = ? AND id = ?`,
        )
        .run(token, now + leaseMs, envelope.source, envelope.id);
      return { status: 'stale-pending', token };
    });

  const takeStale = (olderThanMs: number, leaseMs: number, limit: number): StaleClaim[] => {
    const now = Date.now();
    const rows = handle.immediate(
      () =>
        handle
          .stmt(
            `UPDATE onceflow_inbox
             SET claim_token = lower(hex(randomblob(16))), claim_expires_at = ?
             WHERE (source, id) IN (
               SELECT source, id FROM onceflow_inbox
               WHERE state = 'pending' AND claimed_at <= ? AND claim_expires_at <= ?
                 AND processed_at IS NULL
               ORDER BY claimed_at LIMIT ?)
             RETURNING envelope, claim_token AS token, claimed_at`,
          )
          .all(now + leaseMs, now - olderThanMs, now, limit) as {
          envelope: string;
          token: string;
          claimed_at: number;
        }[],
    );
    rows.sort((a, b) => a.claimed_at - b.claimed_at);
    return rows.map((r) => ({ envelope: decodeEnvelope(r.envelope), token: r.token }));
  };

  const stats = (): InboxStats => {
    const row = handle
      .stmt(
        `SELECT
           count(*) FILTER (WHERE state = 'pending' AND processed_at IS NULL) AS pending,
           count(*) FILTER (WHERE state = 'enqueued' AND processed_at IS NULL) AS enqueued,
           count(*) FILTER (WHERE processed_at IS NOT NULL) AS processed,
           min(received_at) FILTER (WHERE state IS NOT NULL AND processed_at IS NULL) AS oldest,
           (SELECT count(*) FROM onceflow_inbox_conflicts) AS conflicts
         FROM onceflow_inbox`,
      )
      .get() as Record<'pending' | 'enqueued' | 'processed' | 'conflicts', number> & {
      oldest: number | null;
    };
    return {
      pending: row.pending,
      enqueued: row.enqueued,
      processed: row.processed,
      oldestUnprocessedAt: row.oldest === null ? undefined : new Date(row.oldest),
      conflicts: row.conflicts,
    };
  };

  return {
    claim: (envelope, { leaseMs }) => asStore('claim', () => claim(envelope, leaseMs)),
    markEnqueued: (source, id, token) =>
      asStore('markEnqueued', () => {
        handle
          .stmt(
            `UPDATE onceflow_inbox SET state = 'enqueued', enqueued_at = ?,
               claim_token = NULL, claim_expires_at = NULL
             WHERE source = ? AND id = ? AND claim_token = ? AND state = 'pending'`,
          )
          .run(Date.now(), source, id, token);
      }),
    release: (source, id, token) =>
      asStore('release', () => {
        handle
          .stmt(
            `DELETE FROM onceflow_inbox
             WHERE source = ? AND id = ? AND claim_token = ? AND state = 'pending'`,
          )
          .run(source, id, token);
      }),
    takeStale: ({ olderThanMs, leaseMs, limit }) =>
      asStore('takeStale', () => takeStale(olderThanMs, leaseMs, limit)),
    recordConflict: (envelope) =>
      asStore('recordConflict', () => {
        handle
          .stmt(
            `INSERT INTO onceflow_inbox_conflicts (source, id, payload_hash, seen_at)
             VALUES (?, ?, ?, ?)`,
          )
          .run(envelope.source, envelope.id, envelope.payloadHash, Date.now());
      }),
    purge: ({ olderThan }) =>
      asStore('purge', () =>
        handle.immediate(() => {
          const cutoff = olderThan.getTime();
          handle.stmt('DELETE FROM onceflow_inbox_conflicts WHERE seen_at < ?').run(cutoff);
          return handle
            .stmt(
              `DELETE FROM onceflow_inbox
               WHERE received_at < ?
                 AND (processed_at IS NOT NULL OR state = 'enqueued')
                 AND NOT (processed_at IS NULL AND coalesce(processing_expires_at, 0) > ?)`,
            )
            .run(cutoff, Date.now()).changes;
        }),
      ),
    stats: () => asStore('stats', stats),
  };
}
