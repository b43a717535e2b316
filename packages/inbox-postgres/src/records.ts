import { randomUUID } from 'node:crypto';
import {
  type BeginResult,
  type EventState,
  type RecordPage,
  type RecordStore,
  UsageError,
} from '@onceflow/core';
import {
  completedNote,
  decodeEnvelope,
  encodeCursor,
  encodeEnvelope,
  positiveMs,
} from '@onceflow/core/kit';
import { exec, type Queryable, run } from './exec.js';
import { countQuery, listQuery } from './record-query.js';
import { envelopeFields, type RecordRow, toRecord } from './record-row.js';
import type { RecordStatements } from './record-statements.js';

/** Rounds of begin before answering `busy` (the lease kept changing hands under it). */
const MAX_ROUNDS = 3;
/** `retryAfterMs` when the holder could not be pinned down. */
const FALLBACK_RETRY_MS = 100;

/** What an operator's action enters, and the note it leaves in the history. */
const ACTIONS = {
  redriven: { state: 'enqueued', note: 'redriven' },
  discarded: { state: 'discarded', note: 'purged' },
} as const satisfies Record<string, { state: EventState; note: string }>;

function attemptNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be an integer >= 0, got ${value}`);
  }
  return value;
}

interface BeginRow {
  state: EventState;
  remaining_ms: number | null;
}

/**
 * The event record over the inbox table (`release` lives with the store: it serves the inbox
 * too). `begin` is one statement when it acquires (two when it answers processed,
 * dead-lettered or busy): of any number of concurrent attempts one acquires a live lease,
 * and it creates the record of an event that never passed a receiver. `complete`,
 * `scheduleRetry` and `extend` act only while the token owns the lease (even if it ran out, as
 * long as no one took it over); `complete` and `deadLetter` are idempotent. Each write is one
 * statement and appends its history entry in it.
 */
export function createRecordMethods(
  db: Queryable,
  table: string,
  sql: RecordStatements,
): Omit<RecordStore, 'release'> {
  return {
    async begin(envelope, { leaseMs, attempt, consumer, redrive }): Promise<BeginResult> {
      positiveMs('leaseMs', leaseMs);
      attemptNumber('attempt', attempt);
      const { source, id } = envelope;
      const fields = envelopeFields(envelope);
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const token = randomUUID();
        const values = [source, id, token, leaseMs, attempt, consumer ?? null, redrive ?? null];
        const taken = await exec(db, sql.begin, [...values, ...fields], 'begin');
        if (taken.rowCount === 1) return { status: 'acquired', token };
        const res = await exec<BeginRow>(db, sql.beginExisting, [source, id], 'begin');
        const row = res.rows[0];
        if (row === undefined) continue; // deleted in between (purged): go round
        if (row.state === 'completed' || row.state === 'discarded') return { status: 'processed' };
        if (row.state === 'dead-lettered' && redrive === undefined) {
          return { status: 'dead-lettered' };
        }
        const remaining = row.state === 'processing' ? (row.remaining_ms ?? 0) : 0;
        if (remaining > 0) return { status: 'busy', retryAfterMs: remaining };
        // Free now, though the upsert found it taken: the lease changed hands in between. Again.
      }
      return { status: 'busy', retryAfterMs: FALLBACK_RETRY_MS };
    },

    async extend(source, id, token, leaseMs) {
      positiveMs('leaseMs', leaseMs);
      const res = await exec(db, sql.extend, [source, id, token, leaseMs], 'extend');
      return res.rowCount === 1;
    },

    async complete(source, id, token, options) {
      const note = completedNote(options?.note) ?? null;
      await exec(db, sql.complete, [source, id, token, note], 'complete');
    },

    async scheduleRetry(source, id, token, { error, nextAttemptAt }) {
      if (!(nextAttemptAt instanceof Date) || Number.isNaN(nextAttemptAt.getTime())) {
        throw new UsageError('nextAttemptAt is not a date');
      }
      const values = [source, id, token, error ? JSON.stringify(error) : null, nextAttemptAt];
      await exec(db, sql.scheduleRetry, values, 'scheduleRetry');
    },

    async deadLetter(envelope, token, fields) {
      attemptNumber('attempts', fields.attempts);
      const values = [
        envelope.source,
        envelope.id,
        token ?? null,
        encodeEnvelope(envelope),
        fields.reason,
        fields.error ? JSON.stringify(fields.error) : null,
        fields.attempts,
        fields.actor ?? null,
        fields.note ?? null,
        ...envelopeFields(envelope),
      ];
      await exec(db, sql.deadLetter, values, 'deadLetter');
    },

    async get(source, id) {
      const res = await exec<RecordRow & { envelope: string | null }>(
        db,
        sql.get,
        [source, id],
        'get',
      );
      const row = res.rows[0];
      if (row === undefined) return undefined;
      const envelope = row.envelope === null ? undefined : decodeEnvelope(row.envelope);
      return { ...toRecord(row), envelope };
    },

    async list(query): Promise<RecordPage> {
      const built = listQuery(table, query);
      const res = await run<RecordRow>(db, built.text, built.values, 'list');
      const page = res.rows.slice(0, built.limit);
      const last = page.at(-1);
      return {
        records: page.map(toRecord),
        next:
          res.rows.length > built.limit && last
            ? encodeCursor({
                updatedAt: last.updated_at.getTime(),
                source: last.source,
                id: last.id,
              })
            : undefined,
      };
    },

    async count(filter) {
      const built = countQuery(table, filter);
      const res = await run<{ n: number }>(db, built.text, built.values, 'count');
      return res.rows[0]?.n ?? 0;
    },

    async act(source, id, { kind, actor }) {
      const action = Object.hasOwn(ACTIONS, kind) ? ACTIONS[kind] : undefined;
      if (action === undefined) {
        throw new UsageError(`action kind must be redriven or discarded, got ${String(kind)}`);
      }
      const values = [source, id, action.state, actor, action.note];
      return (await exec(db, sql.act, values, 'act')).rowCount === 1;
    },
  };
}
