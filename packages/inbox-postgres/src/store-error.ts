import { OnceflowError, StoreUnavailableError } from '@onceflow/core';

/** SQLSTATE of "relation does not exist": the inbox tables were never migrated. */
const UNDEFINED_TABLE = '42P01';

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Turns anything `pg` throws (connection refused, timeouts, SQL errors) into a
 * `StoreUnavailableError` keeping the original as `cause`, so the receiver answers 503 and the
 * worker retries. onceflow's own errors pass through unchanged.
 */
export function toStoreError(err: unknown, operation: string): OnceflowError {
  if (err instanceof OnceflowError) return err;
  const reason = err instanceof Error ? err.message || sqlState(err) || err.name : String(err);
  const hint = sqlState(err) === UNDEFINED_TABLE ? ' (run migrate() first)' : '';
  return new StoreUnavailableError(`postgres inbox: ${operation} failed: ${reason}${hint}`, {
    cause: err,
  });
}
