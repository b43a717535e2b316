import {
  EVENT_STATES,
  type RecordFilter,
  type RecordQuery,
  UsageError,
  isEventState,
} from '@onceflow/core';
import { decodeCursor, pageSize } from '@onceflow/core/kit';
import { RECORD_COLUMNS, stateLiteral } from './record-sql.js';

/**
 * The column a filter reads `updated_at` from. Dead letters: `dead_lettered_at`, which equals
 * `updated_at` on every dead letter and is NULL on every other record (the table's check holds
 * it), so the same query reads the dead-letter index instead of the table.
 */
const timeColumn = (filter: RecordFilter) =>
  filter.state === 'dead-lettered' ? 'dead_lettered_at' : 'updated_at';

/** Page order, byte-wise on (source, id) so every database collation pages alike. */
const pageOrder = (filter: RecordFilter) =>
  `${timeColumn(filter)}, source COLLATE "C", id COLLATE "C"`;

/** A query with its parameters, unnamed: `list` and `count` are planned for the values given. */
export interface BuiltQuery {
  readonly text: string;
  readonly values: unknown[];
}

function validDate(name: string, value: Date): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new UsageError(`${name} must be a valid Date, got ${String(value)}`);
  }
  return value;
}

/**
 * The WHERE clause of a filter. The state goes in as a literal (checked against the states), so
 * the planner sees it; dead letters are `dead_lettered_at IS NOT NULL`, the index's predicate.
 */
function where(filter: RecordFilter, values: unknown[]): string[] {
  const param = (value: unknown) => `$${values.push(value)}`;
  const at = timeColumn(filter);
  const clauses: string[] = [];
  if (filter.state !== undefined) {
    if (!isEventState(filter.state)) {
      throw new UsageError(`state must be one of ${EVENT_STATES.join(', ')}, got ${filter.state}`);
    }
    clauses.push(
      filter.state === 'dead-lettered'
        ? 'dead_lettered_at IS NOT NULL'
        : `state = ${stateLiteral(filter.state)}`,
    );
  }
  if (filter.source !== undefined) clauses.push(`source = ${param(filter.source)}`);
  if (filter.type !== undefined) clauses.push(`type = ${param(filter.type)}`);
  if (filter.reason !== undefined) {
    clauses.push(`strpos(coalesce(reason, ''), ${param(filter.reason)}) > 0`);
  }
  if (filter.updatedBefore !== undefined) {
    clauses.push(`${at} < ${param(validDate('updatedBefore', filter.updatedBefore))}`);
  }
  if (filter.updatedAfter !== undefined) {
    clauses.push(`${at} >= ${param(validDate('updatedAfter', filter.updatedAfter))}`);
  }
  return clauses;
}

const whereText = (clauses: readonly string[]) =>
  clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`;

/**
 * One page, oldest `updated_at` first: keyset pagination after the cursor's (updated_at,
 * source, id), one row more than the page so the caller knows whether a next page exists.
 * `UsageError` for a bad cursor, page size, state or date.
 */
export function listQuery(
  table: string,
  query: RecordQuery,
): BuiltQuery & { readonly limit: number } {
  const limit = pageSize(query.limit);
  const values: unknown[] = [];
  const clauses = where(query, values);
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor);
    const [at, source, id] = [
      values.push(validDate('cursor', new Date(after.updatedAt))),
      values.push(after.source),
      values.push(after.id),
    ];
    clauses.push(`(${pageOrder(query)}) > ($${at}, $${source}, $${id})`);
  }
  values.push(limit + 1);
  return {
    text: `SELECT ${RECORD_COLUMNS} FROM ${table} ${whereText(clauses)}
      ORDER BY ${pageOrder(query)} LIMIT $${values.length}`,
    values,
    limit,
  };
}

export function countQuery(table: string, filter: RecordFilter): BuiltQuery {
  const values: unknown[] = [];
  return {
    text: `SELECT count(*)::int AS n FROM ${table} ${whereText(where(filter, values))}`,
    values,
  };
}
