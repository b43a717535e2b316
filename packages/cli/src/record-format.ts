import type { EventRecord, HistoryEntry } from '@onceflow/core';
import { keyValues, table } from './format.js';

const orDash = (value: string | number | undefined) =>
  value === undefined || value === '' ? '-' : String(value);

/** `SCHEMA SchemaError: amount must be a string`. */
export const errorLine = (e: NonNullable<EventRecord['lastError']>) =>
  `${e.code} ${e.name}: ${e.message}`;

/** The record's fields as aligned key/value lines (`events show`, `dead-letters show`). */
export function recordLines(r: EventRecord): string[] {
  return keyValues([
    ['source', r.source],
    ['id', r.id],
    ['type', orDash(r.type)],
    ['key', orDash(r.key)],
    ['state', r.state],
    ['attempts', String(r.attempts)],
    ['next attempt', orDash(r.nextAttemptAt)],
    ['last error', r.lastError ? errorLine(r.lastError) : '-'],
    ['reason', orDash(r.reason)],
    ['consumer', orDash(r.consumer)],
    ['trace id', orDash(r.traceId)],
    ['received at', r.receivedAt],
    ['updated at', r.updatedAt],
  ]);
}

/** The history as a timeline, oldest first. */
export function historyLines(history: readonly HistoryEntry[]): string[] {
  return table(
    ['TIME', 'STATE', 'ATTEMPT', 'CODE', 'ACTOR', 'NOTE'],
    history.map((h) => [
      h.at,
      h.state,
      orDash(h.attempt),
      orDash(h.code),
      orDash(h.actor),
      orDash(h.note),
    ]),
  );
}

/** One line per record, for listings; `dead` drops the state column (every row is a dead letter). */
export function recordTable(records: readonly EventRecord[], dead = false): string[] {
  const head = ['UPDATED AT', ...(dead ? [] : ['STATE']), 'SOURCE', 'ID', 'TYPE', 'ATTEMPTS'];
  return table(
    [...head, dead ? 'REASON' : 'REASON / LAST ERROR'],
    records.map((r) => [
      r.updatedAt,
      ...(dead ? [] : [r.state]),
      r.source,
      r.id,
      orDash(r.type),
      String(r.attempts),
      r.reason ?? (r.lastError ? errorLine(r.lastError) : '-'),
    ]),
  );
}
