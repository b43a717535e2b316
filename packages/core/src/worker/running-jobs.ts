import type { Job } from './job.js';

/**
 * The jobs a worker is running, so that shutdown can wait for them and abort them. It limits
 * nothing: the transport enforces `concurrency`.
 */
export interface RunningJobs {
  add(job: Job): void;
  delete(job: Job): void;
  readonly size: number;
  /** How many running jobs last renewed (or started) before `since` (worker clock, ms). */
  renewedBefore(since: number): number;
  /** Aborts every running job's signal with `reason`, marking it interrupted by shutdown. */
  abortAll(reason: Error): void;
  /** Resolves once no job is running (at once if none is). */
  idle(): Promise<void>;
}

/** One per worker; touched from the worker's own delivery callbacks only. */
export function createRunningJobs(): RunningJobs {
  const jobs = new Set<Job>();
  let waiters: (() => void)[] = [];
  return {
    add: (job) => void jobs.add(job),
    delete(job) {
      jobs.delete(job);
      if (jobs.size > 0 || waiters.length === 0) return;
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    },
    get size() {
      return jobs.size;
    },
    renewedBefore(since) {
      let n = 0;
      for (const job of jobs) if (job.renewedAt < since) n++;
      return n;
    },
    abortAll(reason) {
      for (const job of jobs) {
        if (job.abortedBy !== undefined) continue;
        job.abortedBy = 'shutdown';
        job.abort.abort(reason);
      }
    },
    idle: () =>
      jobs.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve)),
  };
}
