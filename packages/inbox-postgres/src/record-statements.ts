import type { InboxNames } from './names.js';
import { enter, historyEntry, RECORD_COLUMNS, RECORD_NOW } from './record-sql.js';
import { inMs, type Statement } from './statements.js';

/** A processing lease that is no longer live (or that a migrated row never had a time for). */
const LEASE_ENDED = `(t.proc_expires_at IS NULL OR t.proc_expires_at <= now())`;

/**
 * The event record's statements, for one inbox table. Each is one autocommit statement that
 * changes the state, `updated_at` and the history together, so a crash never leaves half a
 * change; writes made with a token act only while that token owns the processing lease.
 */
export function recordStatements(n: InboxNames) {
  const t = n.qualified;
  const stmt = (name: string, text: string): Statement => ({
    name: `onceflow_${name}_${n.key}`,
    text,
  });
  // begin's entry: attempt $5, consumer $6; a redrive ($7, who redrove it) says so.
  const processing = { state: `'processing'`, attempt: '$5::int', actor: '$6::text' };
  const redriven = `CASE WHEN t.state = 'dead-lettered' THEN 'redriven by ' || $7::text END`;
  // deadLetter's entry: attempts $7, error $6, actor $8, note $9.
  const deadLettered = {
    state: `'dead-lettered'`,
    attempt: '$7::int',
    code: `$6::jsonb ->> 'code'`,
    note: '$9::text',
  };
  return {
    /**
     * begin's one statement when it acquires (every first delivery): the upsert creates the
     * record (`processing`, from the envelope) for an event that never passed a receiver, or
     * takes the lease of one that is free. Of any number of concurrent begins one takes the
     * lease: the upsert waits for a concurrent writer of the row and re-checks its WHERE on the
     * newest version. No row back: `beginExisting` says why.
     */
    begin: stmt(
      'begin',
      `INSERT INTO ${t} AS t (source, id, state, type, ordering_key, trace_id, received_at,
         attempts, consumer, proc_token, proc_expires_at, updated_at, history)
       VALUES ($1, $2, 'processing', $8, $9, $10, $11, $5, $6, $3, ${inMs('$4')}, ${RECORD_NOW},
         jsonb_build_array(${historyEntry(processing)}))
       ON CONFLICT (source, id) DO UPDATE SET attempts = EXCLUDED.attempts,
         consumer = EXCLUDED.consumer, proc_token = EXCLUDED.proc_token,
         proc_expires_at = EXCLUDED.proc_expires_at, next_attempt_at = NULL,
         ${enter('t.history', { ...processing, note: redriven })}
       WHERE t.state IN ('received', 'enqueued', 'retry-scheduled')
         OR (t.state = 'processing' AND ${LEASE_ENDED})
         OR (t.state = 'dead-lettered' AND $7::text IS NOT NULL)
       RETURNING 1`,
    ),
    /**
     * Why `begin` did not acquire: completed or discarded, dead-lettered, or a live lease and how
     * long it has left. Only a duplicate, a broker's copy of a dead letter or a busy delivery
     * pays this second round trip.
     */
    beginExisting: stmt(
      'begin_old',
      `SELECT state, ceil(extract(epoch FROM proc_expires_at - now()) * 1000)::float8 AS remaining_ms
       FROM ${t} WHERE source = $1 AND id = $2`,
    ),
    extend: stmt(
      'extend',
      `UPDATE ${t} SET proc_expires_at = ${inMs('$4')}
       WHERE source = $1 AND id = $2 AND proc_token = $3 AND state = 'processing' RETURNING 1`,
    ),
    /**
     * Idempotent: a second call, or a call by a token that lost its lease, changes nothing. `$4`:
     * the history entry's note, or NULL.
     */
    complete: stmt(
      'complete',
      `UPDATE ${t} SET processed_at = now(), proc_token = NULL, proc_expires_at = NULL,
         lease_token = NULL, lease_expires_at = NULL, next_attempt_at = NULL,
         ${enter('history', { state: `'completed'`, attempt: 'NULLIF(attempts, 0)', actor: 'consumer', note: '$4::text' })}
       WHERE source = $1 AND id = $2 AND proc_token = $3 AND state = 'processing'`,
    ),
    /** Frees the lease; keeps the previous `last_error` when the attempt gives none. */
    scheduleRetry: stmt(
      'retry',
      `UPDATE ${t} SET proc_token = NULL, proc_expires_at = NULL,
         last_error = coalesce($4::jsonb, last_error), next_attempt_at = $5,
         ${enter('history', { state: `'retry-scheduled'`, attempt: 'attempts', code: `$4::jsonb ->> 'code'`, actor: 'consumer' })}
       WHERE source = $1 AND id = $2 AND proc_token = $3 AND state = 'processing'`,
    ),
    /**
     * One statement: creates the dead letter of an event the store never saw, or turns the
     * record into one unless it is completed, discarded, already dead-lettered (the first dead
     * letter stands), or under a live lease that `$3` does not own. Keeps the envelope ($4).
     */
    deadLetter: stmt(
      'dead',
      `INSERT INTO ${t} AS t (source, id, state, type, ordering_key, trace_id, received_at,
         envelope, reason, last_error, attempts, updated_at, dead_lettered_at, history)
       VALUES ($1, $2, 'dead-lettered', $10, $11, $12, $13, $4, $5, $6::jsonb, $7, ${RECORD_NOW},
         ${RECORD_NOW}, jsonb_build_array(${historyEntry({ ...deadLettered, actor: '$8::text' })}))
       ON CONFLICT (source, id) DO UPDATE SET envelope = EXCLUDED.envelope,
         reason = EXCLUDED.reason, last_error = coalesce(EXCLUDED.last_error, t.last_error),
         attempts = greatest(t.attempts, EXCLUDED.attempts), proc_token = NULL,
         proc_expires_at = NULL, lease_token = NULL, lease_expires_at = NULL, next_attempt_at = NULL,
         ${enter('t.history', { ...deadLettered, actor: 'coalesce($8::text, t.consumer)' })}
       WHERE t.state IN ('received', 'enqueued', 'retry-scheduled')
         OR (t.state = 'processing' AND (t.proc_token = $3::text OR ${LEASE_ENDED}))`,
    ),
    /** An operator's action ($3: the state it enters), on a dead letter only. */
    act: stmt(
      'act',
      `UPDATE ${t} SET attempts = CASE WHEN $3::text = 'enqueued' THEN 0 ELSE attempts END,
         ${enter('history', { state: '$3::text', actor: '$4::text', note: '$5::text' })}
       WHERE source = $1 AND id = $2 AND state = 'dead-lettered' RETURNING 1`,
    ),
    get: stmt('get', `SELECT ${RECORD_COLUMNS}, envelope FROM ${t} WHERE source = $1 AND id = $2`),
  } as const;
}

export type RecordStatements = ReturnType<typeof recordStatements>;
