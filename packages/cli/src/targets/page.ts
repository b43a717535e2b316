import { decodeEnvelope } from '@onceflow/core/kit';
import type { EventState } from '@onceflow/core';
import type { InboxPage } from '../browser.js';

/** A keyset cursor: the (received, source, id) of the last row of a page, opaque to callers. */
export type Cursor<T extends string | number> = [receivedAt: T, source: string, id: string];

export const encodeCursor = <T extends string | number>(c: Cursor<T>): string =>
  Buffer.from(JSON.stringify(c)).toString('base64url');

/** Throws `RangeError` for a cursor this module did not write. */
export function decodeCursor<T extends string | number>(text: string): Cursor<T> {
  const c: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  if (!Array.isArray(c) || c.length !== 3) throw new RangeError('malformed inbox cursor');
  return c as Cursor<T>;
}

interface PageRow {
  readonly source: string;
  readonly id: string;
  readonly envelope: string;
  readonly state: EventState;
}

/** One page of stored events; `next` is set only when the page came back full. */
export function toPage<R extends PageRow, T extends string | number>(
  rows: readonly R[],
  limit: number,
  receivedOf: (row: R) => T,
): InboxPage {
  const last = rows[rows.length - 1];
  return {
    events: rows.map((r) => ({ envelope: decodeEnvelope(r.envelope), state: r.state })),
    next:
      last && rows.length === limit
        ? encodeCursor<T>([receivedOf(last), last.source, last.id])
        : undefined,
  };
}
