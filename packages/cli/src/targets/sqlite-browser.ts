import type { EventState } from '@onceflow/core';
import type { InboxBrowser, InboxQuery } from '../browser.js';
import { decodeCursor, toPage } from './page.js';

/** The part of a better-sqlite3 connection the browser uses (`embedded.db` fits). */
export interface SqliteReader {
  prepare(sql: string): {
    all(...params: unknown[]): unknown[];
    get(...params: unknown[]): unknown;
  };
}

interface Row {
  source: string;
  id: string;
  envelope: string;
  received_at: number;
  state: EventState;
}

/**
 * WHERE clause and parameters for a query; only the given filters appear, so indexes apply.
 * `listing`: only records whose envelope is kept (what `list` can return).
 */
function where(query: InboxQuery, listing: boolean): { sql: string; params: unknown[] } {
  const parts: string[] = listing ? ['envelope IS NOT NULL'] : [];
  const params: unknown[] = [];
  const add = (sql: string, ...values: unknown[]) => {
    parts.push(sql);
    params.push(...values);
  };
  if (query.since) add('received_at >= ?', query.since.getTime());
  if (query.until) add('received_at < ?', query.until.getTime());
  if (query.source !== undefined) add('source = ?', query.source);
  if (query.type !== undefined) add(`json_extract(envelope, '$.type') = ?`, query.type);
  if (query.states) add('state IN (SELECT value FROM json_each(?))', JSON.stringify(query.states));
  return { sql: parts.join(' AND ') || 'TRUE', params };
}

/**
 * An `InboxBrowser` over the embedded store's `onceflow_inbox` table (schema version 2, the event
 * record), read through the store's own connection. Plain SELECTs: it takes no write lock and
 * never blocks the receiver or workers (WAL readers do not wait for writers). Records without a
 * stored envelope are counted but not listed.
 *
 * @example
 * const browser = createSqliteInboxBrowser(embedded.db);
 * const { events } = await browser.list({ since: new Date('2025-03-01'), limit: 100 });
 */
export function createSqliteInboxBrowser(db: SqliteReader): InboxBrowser {
  return {
    async list({ limit, after, ...query }) {
      const w = where(query, true);
      if (after !== undefined) {
        w.sql += ' AND (received_at, source, id) > (?, ?, ?)';
        w.params.push(...decodeCursor<number>(after));
      }
      const rows = db
        .prepare(
          `SELECT source, id, envelope, received_at, state FROM onceflow_inbox
           WHERE ${w.sql} ORDER BY received_at, source, id LIMIT ?`,
        )
        .all(...w.params, limit) as Row[];
      return toPage(rows, limit, (r) => r.received_at);
    },
    async count(query) {
      const w = where(query, false);
      const row = db
        .prepare(`SELECT count(*) AS n FROM onceflow_inbox WHERE ${w.sql}`)
        .get(...w.params);
      return (row as { n: number }).n;
    },
  };
}
