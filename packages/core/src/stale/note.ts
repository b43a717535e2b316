import { NOTE_LIMIT } from '../contracts/records.js';

/**
 * A `complete` note as stores keep it: undefined when absent or empty, else at most `NOTE_LIMIT`
 * characters (cut ones end in `…`).
 *
 * @example
 * completedNote(options?.note); // 'stale: version 5 ≤ 7 applied for order:1'
 */
export function completedNote(note: string | undefined): string | undefined {
  if (note === undefined || note === '') return undefined;
  return note.length > NOTE_LIMIT ? `${note.slice(0, NOTE_LIMIT - 1)}…` : note;
}
