import type { InboxNames } from './names.js';

/** A named statement: `pg` prepares it once per connection and reuses the plan. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * Longest a batch statement waits for a lock one of its rows is under (set for that statement's
 * transaction only). Past it the batch fails with lock_not_available and each of its callers
 * runs its own statement, which waits as long as it must. See `batchedHotPath`.
 */
export const BATCH_LOCK_TIMEOUT = '10ms';

/** `now() + $n ms`, computed on the database clock so leases never depend on app clocks. */
const inMs = (param: string): string => `now() + (${param}::float8 * interval '1 millisecond')`;

/**
 * Every statement the store runs, for one inbox table. Each is a single statement (autocommit),
 * so each is atomic on its own; the comments say which races each one closes.
 */
export function inboxStatements(n: InboxNames) {
  const t = n.qualified;
  const c = n.sibling('conflicts');
  const stmt = (name: string, text: string): Statement => ({
    name: `onceflow_${name}_${n.key}`,
    text,
  });
  return {
    /** Fast path of claim: exactly one of any number of concurrent inserts returns a row. */
    claimInsert: stmt(
      'claim_ins',
      `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, lease_token, lease_expires_at)
       VALUES ($1, $2, 'pending', $3, $4, $5, $6, ${inMs('$7')})
       ON CONFLICT (source, id) DO NOTHING RETURNING 1`,
    ),
    /**
     * The fast path for many claims at once (batching): one row per distinct (source, id), all
     * in one statement and one commit. Rows go in key order, so two batches that share keys
     * wait on each other in one direction only and never deadlock. A row that has to wait for
     * another transaction (inserting or changing the same key) waits at most
     * `BATCH_LOCK_TIMEOUT` before the batch fails with lock_not_available, and its callers go
     * alone, so no batchmate waits on another's lock for long. Returns the tokens of the rows
     * it inserted; a caller whose token is missing takes the slow path below.
     */
    claimInsertBatch: stmt(
      'claim_ins_b',
      `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, lease_token, lease_expires_at)
       SELECT u.source, u.id, 'pending', u.hash, u.envelope, u.received_at, u.token, ${inMs('u.lease_ms')}
       FROM (SELECT set_config('lock_timeout', '${BATCH_LOCK_TIMEOUT}', true)) AS bounded_wait,
         unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::float8[])
           AS u(source, id, hash, envelope, received_at, token, lease_ms)
       ORDER BY u.source, u.id
       ON CONFLICT (source, id) DO NOTHING RETURNING lease_token`,
    ),
    /**
     * Slow path of claim: reads the row and, in the same statement, takes it when it is free: a
     * pending claim whose lease ran out (same hash only), or a row the processed-guard created
     * for an event no receiver claimed yet (no hash). The UPDATE re-checks its WHERE on the
     * newest row version after waiting for any concurrent taker (READ COMMITTED), so one wins.
     */
    claimExisting: stmt(
      'claim_old',
      `WITH cur AS (SELECT state, payload_hash FROM ${t} WHERE source = $1 AND id = $2),
       taken AS (
         UPDATE ${t} SET state = 'pending', payload_hash = $3, envelope = coalesce(envelope, $6),
           claimed_at = CASE WHEN payload_hash IS NULL THEN now() ELSE claimed_at END,
           lease_token = $4, lease_expires_at = ${inMs('$5')}
         WHERE source = $1 AND id = $2 AND (
           (state = 'pending' AND payload_hash = $3 AND lease_expires_at <= now())
           OR (payload_hash IS NULL AND state <> 'processed'))
         RETURNING 1)
       SELECT cur.state, cur.payload_hash, EXISTS (SELECT 1 FROM taken) AS taken FROM cur`,
    ),
    /**
     * Commits without waiting for the WAL flush (`synchronous_commit = off` for this transaction
     * only): losing it in a database crash leaves the row pending, which is exactly the case the
     * relay (and the sender's retry) already recover from, harmlessly. It saves the webhook's
     * second flush wait. https://www.postgresql.org/docs/current/wal-async-commit.html
     */
    markEnqueued: stmt(
      'enqueued',
      `UPDATE ${t} SET state = 'enqueued', enqueued_at = now(), lease_token = NULL, lease_expires_at = NULL
       FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
       WHERE source = $1 AND id = $2 AND state = 'pending' AND lease_token = $3`,
    ),
    /**
     * `markEnqueued` for many tokens at once (batching), same rules and commit as above. A row
     * under another transaction's lock (a handler's open transaction that marked it processed)
     * is waited for at most `BATCH_LOCK_TIMEOUT`, then the batch's callers go alone, as for claims.
     */
    markEnqueuedBatch: stmt(
      'enqueued_b',
      `UPDATE ${t} AS t SET state = 'enqueued', enqueued_at = now(), lease_token = NULL, lease_expires_at = NULL
       FROM (SELECT set_config('synchronous_commit', 'off', true),
               set_config('lock_timeout', '${BATCH_LOCK_TIMEOUT}', true)) AS settings,
         unnest($1::text[], $2::text[], $3::text[]) AS u(source, id, token)
       WHERE t.source = u.source AND t.id = u.id AND t.state = 'pending' AND t.lease_token = u.token`,
    ),
    /**
     * Release by token, whichever lease it names. A claim token: the receiver's claim is dropped
     * so the sender's retry is `new` (the row goes, unless a worker holds it: then only its inbox
     * part goes). A processing token: the lease is dropped so the next delivery can `begin` (a
     * row that holds nothing else goes).
     */
    release: stmt(
      'release',
      `WITH claim_dropped AS (
         DELETE FROM ${t} WHERE source = $1 AND id = $2 AND state = 'pending' AND lease_token = $3
           AND proc_token IS NULL RETURNING 1),
       claim_cleared AS (
         UPDATE ${t} SET state = 'enqueued', payload_hash = NULL, envelope = NULL,
           lease_token = NULL, lease_expires_at = NULL
         WHERE source = $1 AND id = $2 AND state = 'pending' AND lease_token = $3
           AND proc_token IS NOT NULL RETURNING 1),
       lease_dropped AS (
         DELETE FROM ${t} WHERE source = $1 AND id = $2 AND proc_token = $3
           AND state <> 'processed' AND payload_hash IS NULL RETURNING 1),
       lease_cleared AS (
         UPDATE ${t} SET proc_token = NULL, proc_expires_at = NULL
         WHERE source = $1 AND id = $2 AND proc_token = $3
           AND state <> 'processed' AND payload_hash IS NOT NULL RETURNING 1)
       SELECT (SELECT count(*) FROM claim_dropped) + (SELECT count(*) FROM claim_cleared)
         + (SELECT count(*) FROM lease_dropped) + (SELECT count(*) FROM lease_cleared) AS touched`,
    ),
    /** Concurrent relays get disjoint rows (SKIP LOCKED); each row gets a fresh token. */
    takeStale: stmt(
      'stale',
      `WITH stale AS (
         SELECT source, id FROM ${t}
         WHERE state = 'pending' AND claimed_at <= now() - ($1::float8 * interval '1 millisecond')
           AND lease_expires_at <= now()
         ORDER BY claimed_at LIMIT $3
         FOR UPDATE SKIP LOCKED)
       UPDATE ${t} AS t SET lease_token = gen_random_uuid()::text, lease_expires_at = ${inMs('$2')}
       FROM stale WHERE t.source = stale.source AND t.id = stale.id
       RETURNING t.envelope, t.lease_token, t.claimed_at`,
    ),
    recordConflict: stmt(
      'conflict',
      `INSERT INTO ${c} (source, id, payload_hash, envelope) VALUES ($1, $2, $3, $4)`,
    ),
    /**
     * One batch of retention: enqueued and processed rows only; never pending rows, rows under a
     * live processing lease, or unprocessed rows no receiver claimed (they hold nothing to purge).
     */
    purgeBatch: stmt(
      'purge',
      `WITH doomed AS (
         SELECT source, id FROM ${t}
         WHERE received_at < $1
           AND (state = 'processed' OR (state = 'enqueued' AND payload_hash IS NOT NULL))
           AND (proc_expires_at IS NULL OR proc_expires_at <= now())
         LIMIT $2 FOR UPDATE SKIP LOCKED)
       DELETE FROM ${t} AS t USING doomed WHERE t.source = doomed.source AND t.id = doomed.id`,
    ),
    purgeConflictsBatch: stmt(
      'purge_c',
      `DELETE FROM ${c} WHERE seq IN (SELECT seq FROM ${c} WHERE seen_at < $1 LIMIT $2)`,
    ),
    /** Rows no receiver claimed count only once processed (they are not in the inbox before). */
    stats: stmt(
      'stats',
      `SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
              count(*) FILTER (WHERE state = 'enqueued' AND payload_hash IS NOT NULL) AS enqueued,
              count(*) FILTER (WHERE state = 'processed') AS processed,
              min(received_at) FILTER (WHERE state <> 'processed' AND payload_hash IS NOT NULL)
                AS oldest,
              (SELECT count(*) FROM ${c}) AS conflicts
       FROM ${t}`,
    ),
    /**
     * begin: one atomic upsert. Creates the row for ids that never passed a receiver, or takes
     * the processing lease when none is live; returns no row when processed or busy.
     */
    begin: stmt(
      'begin',
      `INSERT INTO ${t} AS t (source, id, state, received_at, proc_token, proc_expires_at)
       VALUES ($1, $2, 'enqueued', now(), $3, ${inMs('$4')})
       ON CONFLICT (source, id) DO UPDATE
         SET proc_token = EXCLUDED.proc_token, proc_expires_at = EXCLUDED.proc_expires_at
         WHERE t.state <> 'processed' AND (t.proc_expires_at IS NULL OR t.proc_expires_at <= now())
       RETURNING 1`,
    ),
    beginExisting: stmt(
      'begin_old',
      `SELECT state, ceil(extract(epoch FROM proc_expires_at - now()) * 1000)::float8 AS remaining_ms
       FROM ${t} WHERE source = $1 AND id = $2`,
    ),
    extend: stmt(
      'extend',
      `UPDATE ${t} SET proc_expires_at = ${inMs('$4')}
       WHERE source = $1 AND id = $2 AND proc_token = $3 AND state <> 'processed' RETURNING 1`,
    ),
    /** Idempotent: a second call, or a call by a token that lost its lease, changes nothing. */
    complete: stmt(
      'complete',
      `UPDATE ${t} SET state = 'processed', processed_at = now(), proc_token = NULL,
         proc_expires_at = NULL, lease_token = NULL, lease_expires_at = NULL
       WHERE source = $1 AND id = $2 AND proc_token = $3 AND state <> 'processed'`,
    ),
  } as const;
}

export type InboxStatements = ReturnType<typeof inboxStatements>;
