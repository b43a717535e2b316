import {
  type RecordFilter,
  type RecordPage,
  type RecordStore,
  UsageError,
  isEventState,
} from '@onceflow/core';
import { decodeCursor, encodeCursor, pageSize } from '@onceflow/core/kit';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';
import { RECORD_COLUMNS, type RecordRow, toEnvelope, toRecord } from './record-row.js';

const instant = (name: string, date: Date): number => {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new UsageError(`${name} must be a valid Date`);
  return ms;
};

/**
 * WHERE clause and parameters for `filter`; only the given filters appear. A known state is
 * written as a literal so the planner can use the partial index on dead letters (it cannot prove
 * a bound parameter equals `'dead-lettered'`).
 */
function where(filter: RecordFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    parts.push(sql);
    params.push(value);
  };
  if (filter.state !== undefined) {
    if (isEventState(filter.state)) parts.push(`state = '${filter.state}'`);
    else add('state = ?', filter.state); // matches nothing, as on every store
  }
  if (filter.source !== undefined) add('source = ?', filter.source);
  if (filter.type !== undefined) add('type = ?', filter.type);
  if (filter.reason !== undefined) add(`instr(coalesce(reason, ''), ?) > 0`, filter.reason);
  if (filter.updatedBefore !== undefined) {
    add('updated_at < ?', instant('updatedBefore', filter.updatedBefore));
  }
  if (filter.updatedAfter !== undefined) {
    add('updated_at >= ?', instant('updatedAfter', filter.updatedAfter));
  }
  return { sql: parts.length === 0 ? 'true' : parts.join(' AND '), params };
}

/**
 * Reading the record: plain SELECTs, which take no write lock and never wait for writers (WAL).
 * Pages are keyset-paged on (updated_at, source, id), the order of `RecordPage`, so a page costs
 * the same however deep it is; dead letters are listed through their own index, other states by
 * a scan of the table.
 */
export function createRecordQueries(
  handle: DatabaseHandle,
): Pick<RecordStore, 'get' | 'list' | 'count'> {
  const list = (query: Parameters<RecordStore['list']>[0]): RecordPage => {
    const limit = pageSize(query.limit);
    const w = where(query);
    if (query.cursor !== undefined) {
      const after = decodeCursor(query.cursor);
      w.sql += ' AND (updated_at, source, id) > (?, ?, ?)';
      w.params.push(after.updatedAt, after.source, after.id);
    }
    const rows = handle
      .stmt(
        `SELECT ${RECORD_COLUMNS} FROM onceflow_inbox WHERE ${w.sql}
         ORDER BY updated_at, source, id LIMIT ?`,
      )
      .all(...w.params, limit + 1) as RecordRow[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      records: page.map(toRecord),
      next:
        rows.length > limit && last
          ? encodeCursor({ updatedAt: last.updated_at, source: last.source, id: last.id })
          : undefined,
    };
  };

  return {
    get: (source, id) =>
      asStore('get', () => {
        const row = handle
          .stmt(
            `SELECT ${RECORD_COLUMNS}, envelope FROM onceflow_inbox WHERE source = ? AND id = ?`,
          )
          .get(source, id) as (RecordRow & { envelope: string | null }) | undefined;
        return row && { ...toRecord(row), envelope: toEnvelope(row.envelope) };
      }),
    list: (query) => asStore('list', () => list(query)),
    count: (filter) =>
      asStore('count', () => {
        const w = where(filter);
        const row = handle
          .stmt(`SELECT count(*) AS n FROM onceflow_inbox WHERE ${w.sql}`)
          .get(...w.params) as { n: number };
        return row.n;
      }),
  };
}
