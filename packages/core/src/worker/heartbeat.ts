import { isOnceflowError } from '../errors.js';
import { errorLogFields } from '../observability/event-fields.js';
import { type LockDeps, renewLease, renewTransportLock } from './lock.js';
import type { Job } from './job.js';

export interface HeartbeatOptions extends LockDeps {
  /** Tick interval in ms, or `false` for no heartbeat. */
  readonly intervalMs: number | false;
}

/** Starts and stops the heartbeat of each running job; see `heartbeat`. */
export interface Heartbeat {
  start(job: Job): Beat;
  stop(beat: Beat): void;
}

/**
 * Keeps a long handler's locks alive: every `intervalMs` (or up to a quarter of it earlier; one
 * timer per worker, see `createBeats`) while the handler runs, renews the
 * transport lock (where the delivery can, and unless a recent `ctx.renewLock` still covers it)
 * and the processing lease, each for `lockMs` from now. A lost transport lock or lease aborts `ctx.signal` with `LockLostError`;
 * after a lost transport lock the lease is still renewed while the handler runs, so no other
 * attempt starts the same event until this one stops. Transient failures are logged and retried
 * on the next tick. The pipeline starts a job's beat before the handler and stops it when the
 * handler settles, so it never outlives the job. `undefined` for `intervalMs: false`: no heartbeat.
 */
export function heartbeat(options: HeartbeatOptions): Heartbeat | undefined {
  const { intervalMs } = options;
  if (intervalMs === false) return undefined;
  return createBeats(options, intervalMs);
}

/** One running job's heartbeat state. */
export interface Beat {
  readonly job: Job;
  /** When (epoch ms) its next renewal is due. */
  due: number;
  ticking: boolean;
  stopped: boolean;
  lockHeld: boolean;
  leaseHeld: boolean;
}

/**
 * The heartbeats of one worker's running jobs on one shared timer (not one per job): it ticks
 * every quarter interval while any job runs, and renews each job whose renewal is due within
 * that quarter, so a job renews every 0.75 to 1 `intervalMs` (early, never late). The first tick
 * that finds no job running stops it, so jobs run one after another share one timer too.
 */
function createBeats(options: HeartbeatOptions, intervalMs: number): Heartbeat {
  const tickMs = Math.max(1, Math.floor(intervalMs / 4));
  const running = new Set<Beat>();
  let timer: NodeJS.Timeout | undefined;

  const onTick = () => {
    if (running.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const soon = Date.now() + tickMs;
    for (const beat of running) {
      if (beat.ticking || beat.due > soon) continue;
      beat.ticking = true;
      beat.due = Date.now() + intervalMs;
      void renew(beat, options).finally(() => {
        beat.ticking = false;
      });
    }
  };

  return {
    start(job: Job): Beat {
      const beat: Beat = {
        job,
        due: Date.now() + intervalMs,
        ticking: false,
        stopped: false,
        lockHeld: true,
        leaseHeld: true,
      };
      running.add(beat);
      if (timer === undefined) {
        timer = setInterval(onTick, tickMs);
        timer.unref();
      }
      return beat;
    },
    stop(beat: Beat): void {
      beat.stopped = true;
      running.delete(beat);
    },
  };
}

const isLost = (err: unknown) => isOnceflowError(err, 'LOCK_LOST');

/** One renewal of a job's transport lock (where due) and processing lease. */
async function renew(beat: Beat, options: HeartbeatOptions): Promise<void> {
  const { job } = beat;
  const tasks: Promise<void>[] = [];
  if (beat.lockHeld && job.lockUntil - options.now() <= options.lockMs) {
    tasks.push(
      renewTransportLock(job, options).catch((err: unknown) => {
        if (isLost(err)) beat.lockHeld = false;
        else if (!beat.stopped)
          job.log.warn(errorLogFields(err), 'heartbeat: renewing the transport lock failed');
      }),
    );
  }
  if (beat.leaseHeld) {
    tasks.push(
      renewLease(job, options).catch((err: unknown) => {
        if (isLost(err)) beat.leaseHeld = false;
        else if (!beat.stopped)
          job.log.warn(errorLogFields(err), 'heartbeat: renewing the processing lease failed');
      }),
    );
  }
  await Promise.all(tasks);
}
