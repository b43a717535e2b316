import type { ProcessedStore } from '../contracts/inbox.js';
import { isOnceflowError, LockLostError } from '../errors.js';
import type { Job } from './job.js';

/** What extending a job's locks needs. */
export interface LockDeps {
  readonly processed: ProcessedStore;
  /** The transport's `capabilities.lock.maxMs`: no single extension asks for more. */
  readonly maxLockMs: number;
  readonly now: () => number;
}

/** Aborts the job's signal because a lock it relied on is gone. First reason wins. */
export function markLockLost(job: Job, reason: Error): void {
  if (job.abortedBy !== undefined) return;
  job.abortedBy = 'lock-lost';
  job.abort.abort(reason);
}

/** Extends the transport lock to `ms` from now (at most `maxLockMs`). Rejects `LockLostError` once lost. */
export async function extendTransportLock(job: Job, deps: LockDeps, ms: number): Promise<void> {
  const lockMs = Math.min(ms, deps.maxLockMs);
  try {
    await job.delivery.extendLock(lockMs);
    job.lockUntil = Math.max(job.lockUntil, deps.now() + lockMs);
  } catch (err) {
    if (isOnceflowError(err, 'LOCK_LOST')) markLockLost(job, err);
    throw err;
  }
}

/**
 * Renews the processed-guard's lease to `ms` from now. Rejects `LockLostError` (and aborts the
 * job) when another attempt owns it now; a store failure rejects as is (the lease may still hold).
 */
export async function extendLease(job: Job, deps: LockDeps, ms: number): Promise<void> {
  if (job.lease === undefined) return;
  const { source, id } = job.envelope;
  const held = await deps.processed.extend(
    source,
    id,
    job.lease.token,
    Math.min(ms, deps.maxLockMs),
  );
  if (held) return;
  const err = new LockLostError(`processing lease on ${source}/${id} lost to another attempt`);
  markLockLost(job, err);
  throw err;
}
