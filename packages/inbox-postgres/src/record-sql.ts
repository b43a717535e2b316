import { type EventState, HISTORY_LIMIT } from '@onceflow/core';

/**
 * SQL fragments every write of the event record shares, so each state change is one statement
 * that sets the state, `updated_at` and the history entry together.
 */

/**
 * The record's clock: the statement's start on the database clock, in whole milliseconds, so
 * `updated_at`, the history entry's `at` and a list cursor (epoch ms) agree exactly.
 */
export const RECORD_NOW = `date_trunc('milliseconds', statement_timestamp())`;

/** `RECORD_NOW` as ISO-8601 (`2026-12-01T12:14:59.123Z`), as `Date.prototype.toISOString` writes it. */
const RECORD_NOW_ISO = `to_char(${RECORD_NOW} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A SQL string literal of a state. */
export const stateLiteral = (state: EventState): string => `'${state}'`;

/** What a history entry holds besides `at`: each a SQL expression, absent or NULL when unknown. */
export interface EntrySql {
  /** The state entered. */
  readonly state: string;
  readonly attempt?: string | undefined;
  readonly code?: string | undefined;
  readonly actor?: string | undefined;
  readonly note?: string | undefined;
}

/** A SQL string literal: never NULL. */
const literal = (sql: string) => /^'[^']*'$/.test(sql);

/** One `HistoryEntry` as a jsonb object, NULL fields left out (stripped only when one may be). */
export function historyEntry(e: EntrySql): string {
  const optional = [
    e.attempt && `'attempt', ${e.attempt}`,
    e.code && `'code', ${e.code}`,
    e.actor && `'actor', ${e.actor}`,
    e.note && `'note', ${e.note}`,
  ].filter((f): f is string => Boolean(f));
  const object = `jsonb_build_object('at', ${RECORD_NOW_ISO}, 'state', ${e.state}${optional.map((f) => `, ${f}`).join('')})`;
  const mayBeNull = [e.attempt, e.code, e.actor, e.note].some((f) => f && !literal(f));
  return mayBeNull ? `jsonb_strip_nulls(${object})` : object;
}

/**
 * `history` with `entry` appended, keeping the last `HISTORY_LIMIT` entries. The usual case (a
 * short history) is a plain append; only a full one is rebuilt.
 */
export function pushHistory(history: string, entry: string): string {
  const keep = HISTORY_LIMIT - 1;
  return `(CASE WHEN jsonb_array_length(${history}) < ${HISTORY_LIMIT} THEN ${history}
    ELSE (SELECT coalesce(jsonb_agg(h.e ORDER BY h.n), '[]'::jsonb)
          FROM jsonb_array_elements(${history}) WITH ORDINALITY AS h(e, n)
          WHERE h.n > jsonb_array_length(${history}) - ${keep}) END || ${entry})`;
}

/**
 * `SET` assignments entering `entry.state`: the state, `updated_at`, `dead_lettered_at` (equal to
 * `updated_at` while dead-lettered, NULL otherwise: the table's check holds them to it) and the
 * history entry. Unchanged NULLs keep the update heap-only (no indexed column changes).
 */
export function enter(history: string, entry: EntrySql): string {
  return `state = ${entry.state}, updated_at = ${RECORD_NOW},
    dead_lettered_at = CASE WHEN ${entry.state} = 'dead-lettered' THEN ${RECORD_NOW} END,
    history = ${pushHistory(history, historyEntry(entry))}`;
}

/** The columns an `EventRecord` is read from (see `toRecord`). */
export const RECORD_COLUMNS = `source, id, type, ordering_key, state, attempts, next_attempt_at,
  last_error, reason, consumer, trace_id, received_at, updated_at, history`;
