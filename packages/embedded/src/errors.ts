import { brokerCall } from '@onceflow/core/kit';
import { OnceflowError, StoreUnavailableError } from '@onceflow/core';

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/**
 * Runs a store operation, turning any database failure (locked past busy_timeout, disk full,
 * closed) into `StoreUnavailableError`. Onceflow errors pass through unchanged.
 */
export async function asStore<T>(what: string, fn: () => T): Promise<T> {
  try {
    return fn();
  } catch (err) {
    if (err instanceof OnceflowError) throw err;
    throw new StoreUnavailableError(`embedded inbox: ${what} failed: ${describe(err)}`, {
      cause: err,
    });
  }
}

/** As `asStore`, for transport operations: failures become `TransportUnavailableError`. */
export const asTransport = <T>(what: string, fn: () => T): Promise<T> =>
  brokerCall(`embedded transport: ${what}`, fn, { describe });
