import { randomUUID } from 'node:crypto';
import type { BeginResult, ProcessedStore } from '@onceflow/core';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';
import { MARK_PROCESSED_SQL } from './mark-processed.js';

/**
 * The SQLite processed-guard, on the inbox's rows (one row per (source, id)). `begin` is one
 * IMMEDIATE transaction, so of concurrent attempts across every process using the file exactly
 * one holds the processing lease at a time.
 *
 * `complete` is idempotent and records the event processed whichever token completes it (the
 * effect has happened, so the mark must say so, even if this attempt's lease had expired).
 * `release` and `extend` act only while `token` holds the lease.
 */
export function createSqliteProcessedStore(handle: DatabaseHandle): ProcessedStore {
  const begin = (source: string, id: string, leaseMs: number): BeginResult =>
    handle.immediate(() => {
      const now = Date.now();
      const token = randomUUID();
      const taken = handle
        .stmt(
          `INSERT INTO onceflow_inbox (source, id, received_at, processing_token, processing_expires_at)
           VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (source, id) DO UPDATE SET processing_token = excluded.processing_token,
             processing_expires_at = excluded.processing_expires_at
           WHERE processed_at IS NULL AND coalesce(processing_expires_at, 0) <= ?`,
        )
        .run(source, id, now, token, now + leaseMs, now);
      if (taken.changes === 1) return { status: 'acquired', token };
      const row = handle
        .stmt(
          `SELECT processed_at, processing_expires_at FROM onceflow_inbox
           WHERE source = ? AND id = ?`,
        )
        .get(source, id) as { processed_at: number | null; processing_expires_at: number };
      if (row.processed_at !== null) return { status: 'processed' };
      return { status: 'busy', retryAfterMs: Math.max(1, row.processing_expires_at - now) };
    });

  return {
    begin: (source, id, { leaseMs }) => asStore('begin', () => begin(source, id, leaseMs)),
    extend: (source, id, token, leaseMs) =>
      asStore('extend', () => {
        const now = Date.now();
        return (
          handle
            .stmt(
              `UPDATE onceflow_inbox SET processing_expires_at = ?
               WHERE source = ? AND id = ? AND processing_token = ? AND processed_at IS NULL`,
            )
            .run(now + leaseMs, source, id, token).changes === 1
        );
      }),
    complete: (source, id, _token) =>
      asStore('complete', () => {
        const now = Date.now();
        handle.stmt(MARK_PROCESSED_SQL).run(source, id, now, now);
      }),
    release: (source, id, token) =>
      asStore('release', () =>
        handle.immediate(() => {
          const args = [source, id, token];
          // A row the guard created alone goes away; an inbox row only loses the lease.
          const removed = handle
            .stmt(
              `DELETE FROM onceflow_inbox WHERE source = ? AND id = ? AND processing_token = ?
                 AND processed_at IS NULL AND state IS NULL`,
            )
            .run(...args);
          if (removed.changes === 0) {
            handle
              .stmt(
                `UPDATE onceflow_inbox SET processing_token = NULL, processing_expires_at = NULL
                 WHERE source = ? AND id = ? AND processing_token = ? AND processed_at IS NULL`,
              )
              .run(...args);
          }
        }),
      ),
  };
}
