import { LockLostError, OnceflowError, TransportUnavailableError } from '@onceflow/core';

/**
 * BullMQ's error codes for a job that is no longer this holder's: missing job (-1), missing lock
 * (-2), not in the active state (-3), lock held by another token (-6).
 */
const LOST = new Set([-1, -2, -3, -6]);

/** True when `err` is BullMQ saying the job's lock is not ours (any more). */
export function isLockLoss(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && LOST.has(code);
}

/**
 * Runs a broker operation, turning a lost lock into `LockLostError` and any other failure
 * (connection refused, Redis restarting, offline queue disabled) into `TransportUnavailableError`.
 * Onceflow errors pass through unchanged.
 */
export async function asTransport<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OnceflowError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if (isLockLoss(err)) {
      throw new LockLostError(`bullmq ${what}: ${message}; it will be redelivered`, { cause: err });
    }
    throw new TransportUnavailableError(`bullmq transport: ${what} failed: ${message}`, {
      cause: err,
    });
  }
}
