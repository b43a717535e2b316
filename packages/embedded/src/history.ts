import { HISTORY_LIMIT, type HistoryEntry } from '@onceflow/core';

/**
 * SQL for the row's `history` with one more entry, dropping the oldest once it holds
 * `HISTORY_LIMIT`: used in the statement that changes the state, so the record and its history
 * change together. Every write adds one entry and drops one when full, so it never grows past the
 * limit. `entry` is an SQL expression giving the entry as compact JSON object text.
 *
 * Below the limit the entry is appended as text: the store alone writes `history`, always
 * compact JSON, and re-rendering it through the JSON functions on every write cost about a tenth
 * of a delivery (measured against the processed-guard with `synchronous: 'normal'`).
 */
export const appendHistory = (entry: string): string =>
  `CASE WHEN json_array_length(history) >= ${HISTORY_LIMIT}
     THEN json_insert(json_remove(history, '$[0]'), '$[#]', json(${entry}))
   WHEN history = '[]' THEN '[' || ${entry} || ']'
   ELSE substr(history, 1, length(history) - 1) || ',' || ${entry} || ']' END`;

/**
 * SQL for `entry` (compact JSON object text) with a member per `fields` entry (name → SQL
 * expression) whose value is not NULL.
 */
export function withFields(entry: string, fields: Readonly<Record<string, string>>): string {
  const members = Object.entries(fields).map(
    ([name, sql]) =>
      `CASE WHEN ${sql} IS NULL THEN '' ELSE ',"${name}":' || json_quote(${sql}) END`,
  );
  return `substr(${entry}, 1, length(${entry}) - 1) || ${members.join(' || ')} || '}'`;
}

/** `entry` with the row's last attempt (when any) and consumer (as actor), for the lease holder's writes. */
export const withAttempt = (entry: string): string =>
  withFields(entry, { attempt: 'nullif(attempts, 0)', actor: 'consumer' });

/** A history entry at `now` as JSON text (absent fields left out), for a statement parameter. */
export function entryJson(now: number, entry: Omit<HistoryEntry, 'at'>): string {
  return JSON.stringify({ at: new Date(now).toISOString(), ...entry });
}
