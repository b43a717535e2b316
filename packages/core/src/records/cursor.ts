import { RECORD_PAGE_LIMIT } from '../contracts/records.js';
import { UsageError } from '../errors.js';

/** Where a `RecordPage` ended: the last record's position in (updatedAt, source, id) order. */
export interface RecordCursor {
  /** Epoch ms of the last record's `updatedAt`. */
  readonly updatedAt: number;
  readonly source: string;
  readonly id: string;
}

/**
 * The opaque `next` of a `RecordPage`, the same on every store, so a cursor is a plain string an
 * operator can pass back (`--cursor`) and a store validates in one place.
 *
 * @example
 * const next = encodeCursor({ updatedAt: Date.parse(last.updatedAt), source: last.source, id: last.id });
 */
export function encodeCursor(cursor: RecordCursor): string {
  return Buffer.from(JSON.stringify([cursor.updatedAt, cursor.source, cursor.id])).toString(
    'base64url',
  );
}

/** Reads what `encodeCursor` wrote; `UsageError` on anything else. */
export function decodeCursor(text: string): RecordCursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      Number.isFinite(value[0]) &&
      typeof value[1] === 'string' &&
      typeof value[2] === 'string'
    ) {
      return { updatedAt: value[0], source: value[1], id: value[2] };
    }
  } catch {
    // fall through to the typed error
  }
  throw new UsageError(`not a record cursor: ${JSON.stringify(text.slice(0, 80))}`);
}

/** True when (updatedAt, source, id) comes after `cursor` in page order. */
export function isAfter(cursor: RecordCursor, updatedAt: number, source: string, id: string) {
  if (updatedAt !== cursor.updatedAt) return updatedAt > cursor.updatedAt;
  if (source !== cursor.source) return source > cursor.source;
  return id > cursor.id;
}

/** The page size a query may ask for: 1 to `RECORD_PAGE_LIMIT`. `UsageError` otherwise. */
export function pageSize(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > RECORD_PAGE_LIMIT) {
    throw new UsageError(`limit must be an integer from 1 to ${RECORD_PAGE_LIMIT}, got ${limit}`);
  }
  return limit;
}
