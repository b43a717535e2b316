import { randomUUID } from 'node:crypto';
import { type BeginOptions, type Envelope, type RecordStore, UsageError } from '@onceflow/core';
import { completedNote, encodeEnvelope, positiveMs, traceIdOf } from '@onceflow/core/kit';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';
import { appendHistory, entryJson, withAttempt, withFields } from './history.js';
import { createRecordQueries } from './record-queries.js';

type BeginResult = Awaited<ReturnType<RecordStore['begin']>>;

/** The row while `@token` holds its processing lease (live or run out, not yet taken). */
const LEASED = `source = @source AND id = @id AND processing_token = @token AND state = 'processing'`;

/** Leaves `processing` by the lease holder: lease cleared, the state and its entry written. */
const leave = (set: string) => `
  UPDATE onceflow_inbox SET ${set}, processing_token = NULL, processing_expires_at = NULL,
    updated_at = @now, history = ${appendHistory(withAttempt('@entry'))}
  WHERE ${LEASED}`;

const BEGIN = `
  INSERT INTO onceflow_inbox (source, id, state, processing_token, processing_expires_at,
    received_at, updated_at, attempts, type, ordering_key, consumer, trace_id, history)
  VALUES (@source, @id, 'processing', @token, @expires, @receivedAt, @now, @attempt, @type, @key,
    @consumer, @traceId, '[' || @entry || ']')
  ON CONFLICT (source, id) DO UPDATE SET state = 'processing', processing_token = @token,
    processing_expires_at = @expires, updated_at = @now, attempts = @attempt,
    consumer = @consumer, next_attempt_at = NULL,
    history = ${appendHistory(
      withFields('@entry', {
        note: `CASE WHEN state = 'dead-lettered' THEN 'redriven by ' || @redrive END`,
      }),
    )}
  WHERE state IN ('received', 'enqueued', 'retry-scheduled')
    OR (state = 'processing' AND processing_expires_at <= @now)
    OR (state = 'dead-lettered' AND @redrive IS NOT NULL)`;

const DEAD_LETTER = `
  INSERT INTO onceflow_inbox (source, id, state, received_at, updated_at, attempts, type,
    ordering_key, trace_id, reason, last_error, history, envelope)
  VALUES (@source, @id, 'dead-lettered', @receivedAt, @now, @attempts, @type, @key, @traceId,
    @reason, @error, '[' || ${withFields('@entry', { actor: '@actor' })} || ']', @envelope)
  ON CONFLICT (source, id) DO UPDATE SET state = 'dead-lettered', processing_token = NULL,
    processing_expires_at = NULL, next_attempt_at = NULL, updated_at = @now,
    attempts = max(attempts, @attempts), reason = @reason,
    last_error = coalesce(@error, last_error), envelope = @envelope,
    history = ${appendHistory(withFields('@entry', { actor: 'coalesce(@actor, consumer)' }))}
  WHERE state NOT IN ('completed', 'discarded', 'dead-lettered')
    AND NOT (state = 'processing' AND processing_expires_at > @now
      AND processing_token IS NOT @token)`;

const receivedAtOf = (envelope: Envelope, now: number) => {
  const ms = Date.parse(envelope.receivedAt);
  return Number.isNaN(ms) ? now : ms;
};

/** The columns a record takes from its envelope when a write creates it. */
const fromEnvelope = (envelope: Envelope, now: number) => ({
  source: envelope.source,
  id: envelope.id,
  receivedAt: receivedAtOf(envelope, now),
  type: envelope.type,
  key: envelope.key ?? null,
  traceId: traceIdOf(envelope) ?? null,
});

/**
 * The SQLite event record, on the inbox's rows (one row per (source, id)). Each write is one
 * statement, so it is atomic across every process using the file and holds the write lock only
 * for that statement: `begin` is one upsert (of concurrent begins exactly one acquires), and the
 * lease holder's writes (`complete`, `scheduleRetry`, `release`, `deadLetter`) are one UPDATE
 * each, no-ops once `token` no longer holds the lease. `begin` reads the row only when it did not
 * acquire, to say why.
 *
 * `release` here gives up the processing lease only; the store's `release` also serves the inbox.
 */
export function createSqliteRecordStore(handle: DatabaseHandle): Omit<RecordStore, 'release'> & {
  /** `RecordStore.release`: true when `token` held the lease (and gave it up). */
  releaseLease(source: string, id: string, token: string): Promise<boolean>;
} {
  const run = (sql: string, params: Record<string, unknown>) => handle.stmt(sql).run(params);

  /** Why `begin` did not acquire; undefined when the row changed since (released, purged). */
  const whyNot = (
    source: string,
    id: string,
    redrive: string | undefined,
    now: number,
  ): BeginResult | undefined => {
    const row = handle
      .stmt(
        `SELECT state, processing_expires_at AS expires FROM onceflow_inbox
         WHERE source = ? AND id = ?`,
      )
      .get(source, id) as { state: string; expires: number | null } | undefined;
    if (row?.state === 'completed' || row?.state === 'discarded') return { status: 'processed' };
    if (row?.state === 'dead-lettered' && redrive === undefined) return { status: 'dead-lettered' };
    if (row?.state === 'processing' && (row.expires ?? 0) > now) {
      return { status: 'busy', retryAfterMs: (row.expires ?? 0) - now };
    }
    return undefined;
  };

  const begin = (envelope: Envelope, options: BeginOptions): BeginResult => {
    const { leaseMs, attempt, consumer, redrive } = options;
    for (let tries = 1; ; tries++) {
      const now = Date.now();
      const token = randomUUID();
      const taken = run(BEGIN, {
        ...fromEnvelope(envelope, now),
        token,
        expires: now + leaseMs,
        now,
        attempt,
        consumer: consumer ?? null,
        redrive: redrive ?? null,
        entry: entryJson(now, { state: 'processing', attempt, actor: consumer }),
      });
      if (taken.changes === 1) return { status: 'acquired', token };
      const answer = whyNot(envelope.source, envelope.id, redrive, now);
      if (answer) return answer;
      if (tries === 3) return { status: 'busy', retryAfterMs: 1 };
    }
  };

  return {
    ...createRecordQueries(handle),
    // Argument checks come first: a RangeError is a call outside the contract, not a store failure.
    begin: async (envelope, options) => {
      positiveMs('leaseMs', options.leaseMs);
      return asStore('begin', () => begin(envelope, options));
    },
    extend: async (source, id, token, leaseMs) => {
      positiveMs('leaseMs', leaseMs);
      return asStore('extend', () => {
        const expires = Date.now() + leaseMs;
        const sql = `UPDATE onceflow_inbox SET processing_expires_at = @expires WHERE ${LEASED}`;
        return run(sql, { source, id, token, expires }).changes === 1;
      });
    },
    complete: (source, id, token, options) =>
      asStore('complete', () => {
        const now = Date.now();
        const entry = entryJson(now, { state: 'completed', note: completedNote(options?.note) });
        run(leave(`state = 'completed', next_attempt_at = NULL`), {
          source,
          id,
          token,
          now,
          entry,
        });
      }),
    releaseLease: (source, id, token) =>
      asStore('release', () => {
        const now = Date.now();
        const entry = entryJson(now, { state: 'enqueued' });
        return run(leave(`state = 'enqueued'`), { source, id, token, now, entry }).changes === 1;
      }),
    scheduleRetry: (source, id, token, { error, nextAttemptAt }) =>
      asStore('scheduleRetry', () => {
        const next = nextAttemptAt.getTime();
        if (Number.isNaN(next)) throw new UsageError('nextAttemptAt is not a date');
        const now = Date.now();
        const entry = entryJson(now, { state: 'retry-scheduled', code: error?.code });
        run(
          leave(`state = 'retry-scheduled', next_attempt_at = @next,
            last_error = coalesce(@error, last_error)`),
          { source, id, token, now, entry, next, error: error ? JSON.stringify(error) : null },
        );
      }),
    deadLetter: (envelope, token, fields) =>
      asStore('deadLetter', () => {
        const now = Date.now();
        const { reason, error, attempts, actor, note } = fields;
        run(DEAD_LETTER, {
          ...fromEnvelope(envelope, now),
          now,
          token: token ?? null,
          attempts,
          reason,
          error: error ? JSON.stringify(error) : null,
          actor: actor ?? null,
          envelope: encodeEnvelope(envelope),
          entry: entryJson(now, {
            state: 'dead-lettered',
            attempt: attempts,
            code: error?.code,
            note,
          }),
        });
      }),
    act: (source, id, { kind, actor }) =>
      asStore('act', () => {
        if (kind !== 'redriven' && kind !== 'discarded') {
          throw new UsageError(
            `act: kind must be 'redriven' or 'discarded', got ${JSON.stringify(kind)}`,
          );
        }
        const now = Date.now();
        const state = kind === 'redriven' ? 'enqueued' : 'discarded';
        const note = kind === 'redriven' ? 'redriven' : 'purged';
        return (
          run(
            `UPDATE onceflow_inbox SET state = @state, updated_at = @now,
               attempts = CASE WHEN @state = 'enqueued' THEN 0 ELSE attempts END,
               history = ${appendHistory('@entry')}
             WHERE source = @source AND id = @id AND state = 'dead-lettered'`,
            { source, id, state, now, entry: entryJson(now, { state, actor, note }) },
          ).changes === 1
        );
      }),
  };
}
