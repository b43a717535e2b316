import { isOnceflowError } from '../errors.js';
import { errorLogFields } from '../observability/event-fields.js';
import { type LockDeps, renewLease, renewTransportLock } from './lock.js';
import type { Job } from './job.js';
import type { Middleware } from './pipeline.js';

export interface HeartbeatOptions extends LockDeps {
  /** Tick interval in ms, or `false` for no heartbeat. */
  readonly intervalMs: number | false;
}

/**
 * Keeps a long handler's locks alive: every `intervalMs` while the handler runs, renews the
 * transport lock (where the delivery can, and unless a recent `ctx.renewLock` still covers it)
 * and the processing lease, each for `lockMs` from now. A lost transport lock or lease aborts `ctx.signal` with `LockLostError`;
 * after a lost transport lock the lease is still renewed while the handler runs, so no other
 * attempt starts the same event until this one stops. Transient failures are logged and retried
 * on the next tick. Stops when the handler settles; never outlives the job.
 */
export function heartbeat(options: HeartbeatOptions): Middleware {
  return (next) => async (job) => {
    if (options.intervalMs === false) return next(job);
    const stop = startHeartbeat(job, options, options.intervalMs);
    try {
      return await next(job);
    } finally {
      stop();
    }
  };
}

function startHeartbeat(job: Job, options: HeartbeatOptions, intervalMs: number): () => void {
  let stopped = false;
  let ticking = false;
  let lockHeld = true;
  let leaseHeld = true;
  const lost = (err: unknown) => isOnceflowError(err, 'LOCK_LOST');

  const tick = async () => {
    const tasks: Promise<void>[] = [];
    if (lockHeld && job.lockUntil - options.now() <= options.lockMs) {
      tasks.push(
        renewTransportLock(job, options).catch((err: unknown) => {
          if (lost(err)) lockHeld = false;
          else if (!stopped)
            job.log.warn(errorLogFields(err), 'heartbeat: renewing the transport lock failed');
        }),
      );
    }
    if (leaseHeld) {
      tasks.push(
        renewLease(job, options).catch((err: unknown) => {
          if (lost(err)) leaseHeld = false;
          else if (!stopped)
            job.log.warn(errorLogFields(err), 'heartbeat: renewing the processing lease failed');
        }),
      );
    }
    await Promise.all(tasks);
  };

  const timer = setInterval(() => {
    if (ticking || stopped) return;
    ticking = true;
    void tick().finally(() => {
      ticking = false;
    });
  }, intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
