import type { ClientBase, Pool, QueryResult, QueryResultRow } from 'pg';
import type { Statement } from './statements.js';
import { toStoreError } from './store-error.js';

/** A pool (each statement on any free connection) or a client (inside the caller's transaction). */
export type Queryable = Pool | ClientBase;

/** Runs one named statement; every failure surfaces as `StoreUnavailableError` with its cause. */
export async function exec<R extends QueryResultRow>(
  db: Queryable,
  statement: Statement,
  values: readonly unknown[],
  operation: string,
): Promise<QueryResult<R>> {
  try {
    return await db.query<R>({ name: statement.name, text: statement.text, values: [...values] });
  } catch (err) {
    throw toStoreError(err, operation);
  }
}

/** Runs one unnamed statement (planned for the values given); failures as for `exec`. */
export async function run<R extends QueryResultRow>(
  db: Queryable,
  text: string,
  values: readonly unknown[],
  operation: string,
): Promise<QueryResult<R>> {
  try {
    return await db.query<R>(text, [...values]);
  } catch (err) {
    throw toStoreError(err, operation);
  }
}
