import type { InboxNames } from './names.js';
import { inMs, type Statement } from './statements.js';

/**
 * The outbox's statements, for the outbox beside one inbox table. Each is one autocommit
 * statement; the comments say which races each one closes.
 */
/**
 * The dispatcher's writes commit without waiting for the WAL flush (`synchronous_commit` off for
 * that statement's transaction only): one that a crash of PostgreSQL loses is harmless, as a lease
 * that was never taken, a row published again (downstream dedupe catches it) or a reschedule that
 * waits for the lease instead. It saves the WAL flush of two commits per batch; `add`, in the
 * application's transaction, keeps the application's setting.
 */
const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`;

export function outboxStatements(n: InboxNames) {
  const o = n.sibling('outbox');
  const stmt = (name: string, text: string): Statement => ({
    name: `onceflow_${name}_${n.key}`,
    text,
  });
  return {
    /** In the caller's transaction. */
    add: stmt(
      'outbox_add',
      `INSERT INTO ${o} (source, id, ordering_key, envelope) VALUES ($1, $2, $3, $4)`,
    ),
    /**
     * Takes the due heads: unsent rows with no earlier unsent row of their key. The head test
     * asks only "unsent", so a head locked or leased by another dispatcher keeps every later row
     * of its key out of this batch too, whatever the snapshot saw; SKIP LOCKED lets concurrent
     * dispatchers take disjoint batches, and a row leased meanwhile fails the re-checked
     * `available_at`. $1 token, $2 lease ms, $3 limit.
     */
    lease: stmt(
      'outbox_lease',
      `WITH picked AS (
         SELECT c.seq FROM ${o} c
         WHERE c.sent_at IS NULL AND c.available_at <= now()
           AND (c.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM ${o} e
             WHERE e.ordering_key = c.ordering_key AND e.sent_at IS NULL AND e.seq < c.seq))
         ORDER BY c.seq LIMIT $3
         FOR UPDATE SKIP LOCKED)
       UPDATE ${o} t SET lease_token = $1, available_at = ${inMs('$2')}, attempts = t.attempts + 1
       FROM picked, ${ASYNC_COMMIT} WHERE t.seq = picked.seq
       RETURNING t.seq::float8 AS seq, t.envelope, t.attempts`,
    ),
    /** Only rows the lease still owns: one that expired and was re-leased is the new owner's. */
    markSent: stmt(
      'outbox_sent',
      `UPDATE ${o} SET sent_at = now(), lease_token = NULL FROM ${ASYNC_COMMIT}
       WHERE seq = ANY($2::bigint[]) AND lease_token = $1 AND sent_at IS NULL`,
    ),
    reschedule: stmt(
      'outbox_retry',
      `UPDATE ${o} SET lease_token = NULL, available_at = ${inMs('$3')},
         last_error = coalesce($4::jsonb, last_error)
       FROM ${ASYNC_COMMIT}
       WHERE seq = ANY($2::bigint[]) AND lease_token = $1 AND sent_at IS NULL`,
    ),
    /** Oldest sent rows first, `$2` at most per statement, so retention never holds long locks. */
    purgeSent: stmt(
      'outbox_purge',
      `DELETE FROM ${o} WHERE seq IN (
         SELECT seq FROM ${o} WHERE sent_at < now() - ($1::float8 * interval '1 millisecond')
         ORDER BY sent_at LIMIT $2)`,
    ),
    stats: stmt(
      'outbox_stats',
      `SELECT count(*)::float8 AS unsent,
         coalesce(extract(epoch FROM now() - min(created_at)) * 1000, 0)::float8 AS age_ms
       FROM ${o} WHERE sent_at IS NULL`,
    ),
  };
}
