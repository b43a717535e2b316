import type { InboxNames } from './names.js';
import { enter, historyEntry, pushHistory, RECORD_NOW } from './record-sql.js';

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
export const inMs = (param: string): string =>
  `now() + (${param}::float8 * interval '1 millisecond')`;

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
  const receivedEntry = historyEntry({ state: `'received'`, actor: `'receiver'` });
  // markEnqueued moves a received record on; one a worker already took keeps its state.
  const fresh = `t.state = 'received'`;
  const enqueuedSet = `state = CASE WHEN ${fresh} THEN 'enqueued' ELSE t.state END,
    updated_at = CASE WHEN ${fresh} THEN ${RECORD_NOW} ELSE t.updated_at END,
    history = CASE WHEN ${fresh}
      THEN ${pushHistory('t.history', historyEntry({ state: `'enqueued'`, actor: `'receiver'` }))}
      ELSE t.history END,
    enqueued_at = now(), lease_token = NULL, lease_expires_at = NULL`;
  return {
    /**
     * Fast path of claim: exactly one of any number of concurrent inserts returns a row. The
     * record starts `received`, with its first history entry.
     */
    claimInsert: stmt(
      'claim_ins',
      `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, lease_token,
         lease_expires_at, type, ordering_key, trace_id, updated_at, history)
       VALUES ($1, $2, 'received', $3, $4, $5, $6, ${inMs('$7')}, $8, $9, $10, ${RECORD_NOW},
         jsonb_build_array(${receivedEntry}))
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
      `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, lease_token,
         lease_expires_at, type, ordering_key, trace_id, updated_at, history)
       SELECT u.source, u.id, 'received', u.hash, u.envelope, u.received_at, u.token,
         ${inMs('u.lease_ms')}, u.type, u.ordering_key, u.trace_id, ${RECORD_NOW},
         jsonb_build_array(${receivedEntry})
       FROM (SELECT set_config('lock_timeout', '${BATCH_LOCK_TIMEOUT}', true)) AS bounded_wait,
         unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
           $7::float8[], $8::text[], $9::text[], $10::text[])
           AS u(source, id, hash, envelope, received_at, token, lease_ms, type, ordering_key, trace_id)
       ORDER BY u.source, u.id
       ON CONFLICT (source, id) DO NOTHING RETURNING lease_token`,
    ),
    /**
     * Slow path of claim: reads the row and, in the same statement, takes over a received claim
     * whose lease ran out (same hash only). The UPDATE re-checks its WHERE on the newest row
     * version after waiting for any concurrent taker (READ COMMITTED), so one wins.
     */
    claimExisting: stmt(
      'claim_old',
      `WITH cur AS (SELECT state, payload_hash FROM ${t} WHERE source = $1 AND id = $2),
       taken AS (
         UPDATE ${t} SET lease_token = $4, lease_expires_at = ${inMs('$5')}
         WHERE source = $1 AND id = $2 AND state = 'received' AND payload_hash = $3
           AND lease_expires_at <= now()
         RETURNING 1)
       SELECT cur.state, cur.payload_hash, EXISTS (SELECT 1 FROM taken) AS taken FROM cur`,
    ),
    /**
     * Only while the token owns the claim: the record goes received → enqueued (one a worker
     * already took keeps its state; the claim's token is cleared either way). Commits without
     * waiting for the WAL flush (`synchronous_commit = off` for this transaction only): losing
     * it in a database crash leaves the record received, which is exactly the case the
     * relay (and the sender's retry) already recover from, harmlessly. It saves the webhook's
     * second flush wait. https://www.postgresql.org/docs/current/wal-async-commit.html
     */
    markEnqueued: stmt(
      'enqueued',
      `UPDATE ${t} AS t SET ${enqueuedSet}
       FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
       WHERE t.source = $1 AND t.id = $2 AND t.lease_token = $3`,
    ),
    /**
     * `markEnqueued` for many tokens at once (batching), same rules and commit as above. A row
     * under another transaction's lock (a handler's open transaction that marked it processed)
     * is waited for at most `BATCH_LOCK_TIMEOUT`, then the batch's callers go alone, as for claims.
     *
     * The arrays reach `unnest` through a subquery the planner does not flatten (`OFFSET 0`), so
     * it estimates the batch's size the same way with or without the parameters' values: given
     * the arrays themselves it expected fewer rows than a generic plan does, found every custom
     * plan cheaper, and planned the statement anew on each call (about 100 µs a batch).
     */
    markEnqueuedBatch: stmt(
      'enqueued_b',
      `UPDATE ${t} AS t SET ${enqueuedSet}
       FROM (SELECT set_config('synchronous_commit', 'off', true),
               set_config('lock_timeout', '${BATCH_LOCK_TIMEOUT}', true)) AS settings,
         (SELECT $1::text[] AS sources, $2::text[] AS ids, $3::text[] AS tokens OFFSET 0) AS batch,
         unnest(batch.sources, batch.ids, batch.tokens) AS u(source, id, token)
       WHERE t.source = u.source AND t.id = u.id AND t.lease_token = u.token`,
    ),
    /**
     * Release by token, whichever lease it names. A claim token: the receiver's claim is dropped,
     * so the sender's retry is `new` (a `received` record goes; one a worker already took keeps
     * its state and loses only the claim's token). A processing token: the lease is given up
     * unused and the record is `enqueued` again, so the next delivery can `begin` at once.
     */
    release: stmt(
      'release',
      `WITH claim_dropped AS (
         DELETE FROM ${t} WHERE source = $1 AND id = $2 AND lease_token = $3 AND state = 'received'
         RETURNING 1),
       claim_cleared AS (
         UPDATE ${t} SET lease_token = NULL, lease_expires_at = NULL
         WHERE source = $1 AND id = $2 AND lease_token = $3 AND state <> 'received' RETURNING 1),
       lease_released AS (
         UPDATE ${t} SET proc_token = NULL, proc_expires_at = NULL,
           ${enter('history', { state: `'enqueued'`, attempt: 'attempts', actor: 'consumer' })}
         WHERE source = $1 AND id = $2 AND proc_token = $3 AND state = 'processing' RETURNING 1)
       SELECT (SELECT count(*) FROM claim_dropped) + (SELECT count(*) FROM claim_cleared)
         + (SELECT count(*) FROM lease_released) AS touched`,
    ),
    /**
     * `InboxOutcomes.markProcessed`: the worker's record, in another store, finished the event.
     * A received or enqueued record becomes completed, its claim token cleared (the relay passes
     * it over, a late `markEnqueued` changes nothing); any other state is left as it is.
     */
    markProcessed: stmt(
      'processed_mark',
      `UPDATE ${t} SET processed_at = now(), lease_token = NULL, lease_expires_at = NULL,
         ${enter('history', { state: `'completed'`, actor: `'worker'` })}
       WHERE source = $1 AND id = $2 AND state IN ('received', 'enqueued')`,
    ),
    /**
     * Concurrent relays get disjoint rows (SKIP LOCKED); each row gets a fresh token. Reads the
     * claims index (rows whose claim is held: `lease_token IS NOT NULL`).
     */
    takeStale: stmt(
      'stale',
      `WITH stale AS (
         SELECT source, id FROM ${t}
         WHERE lease_token IS NOT NULL AND state = 'received'
           AND claimed_at <= now() - ($1::float8 * interval '1 millisecond')
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
     * One batch of retention: completed, discarded and enqueued records only; never received,
     * processing, retry-scheduled or dead-lettered ones (they still have a life ahead of them).
     * Rows are deleted by the physical address the same statement locked them at: a row locked
     * FOR UPDATE cannot move until this statement's transaction ends, and the lock re-checks
     * the WHERE on the newest version first. Found through the retention index, so a batch never
     * reads the primary key (on a large table, one random page per row).
     */
    purgeBatch: stmt(
      'purge',
      `WITH doomed AS (
         SELECT ctid FROM ${t}
         WHERE received_at < $1 AND state IN ('completed', 'discarded', 'enqueued')
         LIMIT $2 FOR UPDATE SKIP LOCKED)
       DELETE FROM ${t} WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed))`,
    ),
    purgeConflictsBatch: stmt(
      'purge_c',
      `DELETE FROM ${c} WHERE seq IN (SELECT seq FROM ${c} WHERE seen_at < $1 LIMIT $2)`,
    ),
    /**
     * The inbox's view of the records: received is pending; enqueued, processing and
     * retry-scheduled are enqueued; completed and discarded are processed; dead letters are in
     * none. Records no receiver claimed (no hash) count only once processed.
     */
    stats: stmt(
      'stats',
      `SELECT count(*) FILTER (WHERE state = 'received') AS pending,
              count(*) FILTER (WHERE state IN ('enqueued', 'processing', 'retry-scheduled')
                AND payload_hash IS NOT NULL) AS enqueued,
              count(*) FILTER (WHERE state IN ('completed', 'discarded')) AS processed,
              min(received_at) FILTER (WHERE state IN ('received', 'enqueued', 'processing',
                'retry-scheduled') AND payload_hash IS NOT NULL) AS oldest,
              (SELECT count(*) FROM ${c}) AS conflicts
       FROM ${t}`,
    ),
  } as const;
}

export type InboxStatements = ReturnType<typeof inboxStatements>;
