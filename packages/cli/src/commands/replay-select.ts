import type { EventState, RecordStore } from '@onceflow/core';
import type { InboxBrowser, InboxQuery, StoredEvent } from '../browser.js';

/** A named id a replay refuses, and why (`no record`, `dead-lettered: redrive it instead`, …). */
export interface Refused {
  readonly source: string;
  readonly id: string;
  readonly why: string;
}

const WHY: Partial<Record<EventState, string>> = {
  'dead-lettered': 'dead-lettered: redrive it instead',
  discarded: 'discarded',
};

/**
 * The completed events named by id, each with its stored envelope, in the order given. An id with
 * no record, not completed, or whose store kept no envelope (Redis drops it once enqueued) is
 * refused, so the command can stop before publishing anything.
 */
export async function selectByIds(
  records: RecordStore,
  ids: readonly { readonly source: string; readonly id: string }[],
): Promise<{ events: StoredEvent[]; refused: Refused[] }> {
  const events: StoredEvent[] = [];
  const refused: Refused[] = [];
  for (const { source, id } of ids) {
    const record = await records.get(source, id);
    if (!record) refused.push({ source, id, why: 'no record' });
    else if (record.state !== 'completed')
      refused.push({ source, id, why: WHY[record.state] ?? `${record.state}, not completed` });
    else if (!record.envelope) refused.push({ source, id, why: 'no stored envelope' });
    else events.push({ envelope: record.envelope, state: record.state });
  }
  return { events, refused };
}

/** The stored events of a window, a page of at most `size` at a time, `limit` in all. */
export async function* windowPages(
  browser: InboxBrowser,
  query: InboxQuery,
  limit: number,
  size: number,
): AsyncGenerator<readonly StoredEvent[]> {
  let after: string | undefined;
  let left = limit;
  while (left > 0) {
    const page = await browser.list({ ...query, limit: Math.min(size, left), after });
    if (page.events.length > 0) yield page.events;
    left -= page.events.length;
    if (page.next === undefined || page.events.length === 0) return;
    after = page.next;
  }
}

/** `events` in pages of at most `size`. */
export async function* listPages(
  events: readonly StoredEvent[],
  size: number,
): AsyncGenerator<readonly StoredEvent[]> {
  for (let i = 0; i < events.length; i += size) yield events.slice(i, i + size);
}
