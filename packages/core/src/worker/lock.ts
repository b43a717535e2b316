import type { RecordStore } from '../contracts/records.js';
import { isOnceflowError, LockLostError } from '../errors.js';
import type { Job } from './job.js';

/** What renewing a job's locks needs. */
export interface LockDeps {
  readonly records: RecordStore;
  /** The transport's `capabilities.lock.ms`: every renewal is for this long, lock and lease alike. */
  readonly lockMs: number;
  readonly now: () => number;
}

/** Aborts the job's signal because a lock it relied on is gone. First reason wins. */
export function markLockLost(job: Job, reason: Error): void {
  if (job.abortedBy !== undefined) return;
  job.abortedBy = 'lock-lost';
  job.abort.abort(reason);
}

/**
 * Renews the transport lock for `lockMs` where the delivery can (`RenewableDelivery`); a
 * consumer-scoped lock has nothing to renew. Rejects `LockLostError` (and aborts the job) once lost.
 */
export async function renewTransportLock(job: Job, deps: LockDeps): Promise<void> {
  const { delivery } = job;
  if (!('renewLock' in delivery) || typeof delivery.renewLock !== 'function') return;
  try {
    await delivery.renewLock();
    job.renewedAt = deps.now();
    job.lockUntil = job.renewedAt + deps.lockMs;
  } catch (err) {
    if (isOnceflowError(err, 'LOCK_LOST')) markLockLost(job, err);
    throw err;
  }
}

/**
 * Renews the processing lease on the event record for `lockMs`. Rejects `LockLostError` (and
 * aborts the job) when another attempt owns it now; a store failure rejects as is (the lease may
 * still hold).
 */
export async function renewLease(job: Job, deps: LockDeps): Promise<void> {
  if (job.lease === undefined) return;
  const { source, id } = job.envelope;
  if (await deps.records.extend(source, id, job.lease.token, deps.lockMs)) {
    job.renewedAt = deps.now();
    return;
  }
  const err = new LockLostError(`processing lease on ${source}/${id} lost to another attempt`);
  markLockLost(job, err);
  throw err;
}
