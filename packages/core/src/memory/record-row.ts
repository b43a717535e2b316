import type { EventRecord, EventState, HistoryEntry, RecordFilter } from '../contracts/records.js';
import { HISTORY_LIMIT } from '../contracts/records.js';
import type { Envelope } from '../envelope.js';
import type { ErrorInfo } from '../errors.js';
import { traceIdOf } from '../records/trace-id.js';

/** A receiver's claim not yet enqueued: what the relay needs to publish it. */
export interface PendingClaim {
  readonly envelope: Envelope;
  token: string;
  leaseUntil: number;
  readonly claimedAt: number;
}

/**
 * One (source, id) in the memory store: the receiver's claim, the processing lease and the
 * event record on one row, as the database stores keep them.
 */
export interface Row {
  /** The payload hash of the receiver's claim, from `claim` on. */
  claimedHash?: string | undefined;
  /** Present while the claim is pending (not yet enqueued). */
  pending?: PendingClaim | undefined;
  /** Processing lease, while an attempt holds one. */
  lease?: { token: string; until: number } | undefined;
  state: EventState;
  type?: string | undefined;
  key?: string | undefined;
  attempts: number;
  nextAttemptAt?: number | undefined;
  lastError?: ErrorInfo | undefined;
  reason?: string | undefined;
  consumer?: string | undefined;
  traceId?: string | undefined;
  /** Kept for dead letters, so they can be redriven. */
  envelope?: Envelope | undefined;
  /** Time used by purge: the envelope's receivedAt, else when the row was first written. */
  receivedAt: number;
  updatedAt: number;
  history: StoredEntry[];
}

/** A history entry as the row keeps it: its time in epoch ms, made ISO-8601 when read. */
export type StoredEntry = Omit<HistoryEntry, 'at'> & { readonly at: number };

/** The envelope's receivedAt in epoch ms, or `fallback` when it does not parse. */
export function receivedAtOf(envelope: Envelope, fallback: number): number {
  const received = Date.parse(envelope.receivedAt);
  return Number.isNaN(received) ? fallback : received;
}

/** A new row for an envelope first seen at `now`. */
export function newRow(envelope: Envelope, state: EventState, now: number): Row {
  return {
    state,
    type: envelope.type,
    key: envelope.key,
    attempts: 0,
    traceId: traceIdOf(envelope),
    receivedAt: receivedAtOf(envelope, now),
    updatedAt: now,
    history: [],
  };
}

/** A row for an event known only by (source, id), such as one marked processed by hand. */
export function blankRow(now: number): Row {
  return { state: 'enqueued', attempts: 0, receivedAt: now, updatedAt: now, history: [] };
}

/** Moves `row` to `entry.state`, appending the entry and dropping the oldest past the limit. */
export function enter(row: Row, now: number, entry: Omit<HistoryEntry, 'at'>): void {
  row.state = entry.state;
  row.updatedAt = now;
  const { state, attempt, code, actor, note } = entry;
  row.history.push({ at: now, state, attempt, code, actor, note });
  // A count of 0 or less removes nothing, so no test of the length comes first.
  row.history.splice(0, row.history.length - HISTORY_LIMIT);
}

export function toRecord(source: string, id: string, row: Row): EventRecord {
  return {
    source,
    id,
    type: row.type,
    key: row.key,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt:
      row.nextAttemptAt === undefined ? undefined : new Date(row.nextAttemptAt).toISOString(),
    lastError: row.lastError,
    reason: row.reason,
    consumer: row.consumer,
    traceId: row.traceId,
    receivedAt: new Date(row.receivedAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
    history: row.history.map((h) => ({ ...h, at: new Date(h.at).toISOString() })),
  };
}

export function matches(row: Row, source: string, filter: RecordFilter): boolean {
  if (filter.state !== undefined && row.state !== filter.state) return false;
  if (filter.source !== undefined && source !== filter.source) return false;
  if (filter.type !== undefined && row.type !== filter.type) return false;
  if (filter.reason !== undefined && !(row.reason ?? '').includes(filter.reason)) return false;
  if (filter.updatedBefore !== undefined && row.updatedAt >= filter.updatedBefore.getTime())
    return false;
  if (filter.updatedAfter !== undefined && row.updatedAt < filter.updatedAfter.getTime())
    return false;
  return true;
}
