import type { OnceflowError } from '@onceflow/core';
import { brokerCall, brokerError } from '@onceflow/core/kit';

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
 * Runs a broker operation, turning a lost lock into `LockLostError` (the job is redelivered) and
 * any other failure (connection refused, Redis restarting, offline queue disabled) into
 * `TransportUnavailableError`. Onceflow errors pass through unchanged.
 */
export const asTransport = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
  brokerCall(`bullmq ${what}`, fn, { lockLost: isLockLoss });

/** What `asTransport` turns `err` into, for a broker call already sent. */
export const transportError = (what: string, err: unknown): OnceflowError =>
  brokerError(`bullmq ${what}`, err, { lockLost: isLockLoss });
