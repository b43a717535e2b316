import type { EventState } from '@onceflow/core';
import type { InboxBrowser, InboxQuery } from '../browser.js';
import { decodeCursor, toPage } from './page.js';

/** The part of a `pg.Pool` the browser uses. */
export interface PgQueryable {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

interface Row {
  source: string;
  id: string;
  envelope: string;
  received_key: string;
  state: EventState;
}

/** Microsecond-exact UTC text of `received_at`, so paging never skips rows sharing a millisecond. */
const RECEIVED_KEY = `to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** `listing`: only records whose envelope is kept (what `list` can return). */
function where(query: InboxQuery, listing: boolean): { sql: string; params: unknown[] } {
  const parts: string[] = listing ? ['envelope IS NOT NULL'] : [];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    parts.push(sql(`$${params.length}`));
  };
  if (query.since) add((p) => `received_at >= ${p}`, query.since);
  if (query.until) add((p) => `received_at < ${p}`, query.until);
  if (query.source !== undefined) add((p) => `source = ${p}`, query.source);
  if (query.type !== undefined) add((p) => `envelope::jsonb ->> 'type' = ${p}`, query.type);
  if (query.states) add((p) => `state = ANY(${p}::text[])`, [...query.states]);
  return { sql: parts.join(' AND ') || 'TRUE', params };
}

/**
 * An `InboxBrowser` over the PostgreSQL inbox table (migration 002, the event record), `table`
 * being the store's schema-qualified name (`store.table`). Plain SELECTs in autocommit: no row
 * locks, safe beside a running receiver and workers. Records without a stored envelope are
 * counted but not listed.
 *
 * @example
 * const browser = createPostgresInboxBrowser(pool, inbox.table);
 */
export function createPostgresInboxBrowser(db: PgQueryable, table: string): InboxBrowser {
  return {
    async list({ limit, after, ...query }) {
      const w = where(query, true);
      if (after !== undefined) {
        const [at, source, id] = decodeCursor<string>(after);
        const n = w.params.length;
        w.sql += ` AND (received_at, source, id) > ($${n + 1}::timestamptz, $${n + 2}, $${n + 3})`;
        w.params.push(at, source, id);
      }
      w.params.push(limit);
      const { rows } = await db.query(
        `SELECT source, id, envelope, state, ${RECEIVED_KEY} AS received_key FROM ${table}
         WHERE ${w.sql} ORDER BY received_at, source, id LIMIT $${w.params.length}`,
        w.params,
      );
      return toPage(rows as Row[], limit, (r) => r.received_key);
    },
    async count(query) {
      const w = where(query, false);
      const { rows } = await db.query(
        `SELECT count(*) AS n FROM ${table} WHERE ${w.sql}`,
        w.params,
      );
      return Number((rows[0] as { n: string }).n);
    },
  };
}
