import { HISTORY_LIMIT, type HistoryEntry } from '@onceflow/core';

/**
 * SQL for the row's `history` with one more entry, dropping the oldest once it holds
 * `HISTORY_LIMIT`: used in the statement that changes the state, so the record and its history
 * change together. Every write adds one entry and drops one when full, so it never grows past the
 * limit. `entry` is an SQL expression giving the entry as JSON text.
 */
export const appendHistory = (entry: string): string =>
  `json_insert(CASE WHEN json_array_length(history) >= ${HISTORY_LIMIT}
     THEN json_remove(history, '$[0]') ELSE history END, '$[#]', json(${entry}))`;

/**
 * SQL adding the row's last attempt (when any) and consumer (as actor) to `entry`, for the writes
 * of the attempt holding the lease. `json_patch` drops the members that are NULL.
 */
export const withAttempt = (entry: string): string =>
  `json_patch(${entry}, json_object('attempt', nullif(attempts, 0), 'actor', consumer))`;

/** A history entry at `now` as JSON text (absent fields left out), for a statement parameter. */
export function entryJson(now: number, entry: Omit<HistoryEntry, 'at'>): string {
  return JSON.stringify({ at: new Date(now).toISOString(), ...entry });
}
