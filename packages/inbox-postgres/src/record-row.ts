import type { Envelope, ErrorInfo, EventRecord, EventState, HistoryEntry } from '@onceflow/core';
import { traceIdOf } from '@onceflow/core/kit';

/** A row as `RECORD_COLUMNS` reads it (`pg` parses timestamptz to Date and jsonb to values). */
export interface RecordRow {
  source: string;
  id: string;
  type: string | null;
  ordering_key: string | null;
  state: EventState;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: ErrorInfo | null;
  reason: string | null;
  consumer: string | null;
  trace_id: string | null;
  received_at: Date;
  updated_at: Date;
  history: HistoryEntry[];
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

export function toRecord(row: RecordRow): EventRecord {
  return {
    source: row.source,
    id: row.id,
    type: opt(row.type),
    key: opt(row.ordering_key),
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at?.toISOString(),
    lastError: opt(row.last_error),
    reason: opt(row.reason),
    consumer: opt(row.consumer),
    traceId: opt(row.trace_id),
    receivedAt: row.received_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    history: row.history,
  };
}

/** The envelope's `receivedAt`, or now when it does not parse (the record's first write). */
export function receivedAtOf(envelope: Envelope): Date {
  const at = new Date(envelope.receivedAt);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

/** What a record keeps of the envelope it was created from: type, key, trace id, receivedAt. */
export const envelopeFields = (envelope: Envelope) =>
  [
    envelope.type,
    envelope.key ?? null,
    traceIdOf(envelope) ?? null,
    receivedAtOf(envelope),
  ] as const;
