import type { Envelope, ErrorInfo, EventRecord, EventState, HistoryEntry } from '@onceflow/core';
import { decodeEnvelope } from '@onceflow/core/kit';

/** The columns `toRecord` reads (not the envelope, which only `get` returns). */
export const RECORD_COLUMNS = `source, id, state, type, ordering_key, attempts, next_attempt_at,
  last_error, reason, consumer, trace_id, received_at, updated_at, history`;

/** One `onceflow_inbox` row as `RECORD_COLUMNS` selects it. */
export interface RecordRow {
  source: string;
  id: string;
  state: EventState;
  type: string | null;
  ordering_key: string | null;
  attempts: number;
  next_attempt_at: number | null;
  last_error: string | null;
  reason: string | null;
  consumer: string | null;
  trace_id: string | null;
  received_at: number;
  updated_at: number;
  history: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined;

export function toRecord(row: RecordRow): EventRecord {
  return {
    source: row.source,
    id: row.id,
    type: orUndefined(row.type),
    key: orUndefined(row.ordering_key),
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at === null ? undefined : iso(row.next_attempt_at),
    lastError: row.last_error === null ? undefined : (JSON.parse(row.last_error) as ErrorInfo),
    reason: orUndefined(row.reason),
    consumer: orUndefined(row.consumer),
    traceId: orUndefined(row.trace_id),
    receivedAt: iso(row.received_at),
    updatedAt: iso(row.updated_at),
    history: JSON.parse(row.history) as HistoryEntry[],
  };
}

/** The stored envelope (wire format v1), when the row keeps one. */
export const toEnvelope = (text: string | null): Envelope | undefined =>
  text === null ? undefined : decodeEnvelope(text);
