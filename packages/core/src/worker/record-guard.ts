import type { BeginResult, RecordStore } from '../contracts/records.js';
import { REDRIVE_HEADER } from '../records/dead-letter-actions.js';
import type { Job } from './job.js';
import type { StepResult } from './pipeline.js';

/**
 * The worker's dedupe layer: takes the processing lease on the event record for (source, id)
 * before anything runs. `processed` → `duplicate` (acked, handler not run); `dead-lettered` (the
 * record holds it as a dead letter: a copy the broker kept after the worker recorded it) →
 * acked; `busy` (another attempt holds a live lease, e.g. the first delivery still running after
 * its transport lock expired) → retried after the store's `retryAfterMs` (a lease that ends
 * within `leaseMs / 3` is first waited out once, holding the delivery: `waitOut`); `acquired` →
 * the rest of the pipeline runs with `job.lease` set. Writing the attempt's end on the record
 * (completed, retry-scheduled, dead-lettered, released) is `applyVerdict`'s, before it settles
 * with the broker.
 *
 * A redriven copy (header `x-onceflow-redrive`) acquires a dead-lettered record.
 *
 * Its steps are plain functions, not a wrapper around the rest: the worker's pipeline
 * (`pipeline.ts`) awaits `begin` itself, so an acquired lease costs no promise of the guard's.
 */
export interface RecordGuard {
  /** The store's own `begin` for this attempt. */
  begin(job: Job): Promise<BeginResult>;
  /** True when `begun` is a lease about to expire, worth waiting out once (`waitOut`). */
  waits(begun: BeginResult): boolean;
  /** Waits the lease out (or until the job is aborted), then begins again; `begun` if aborted. */
  waitOut(job: Job, begun: BeginResult & { status: 'busy' }): Promise<BeginResult>;
  /** `undefined` once acquired (and `job.lease` set), else what the attempt ends with. */
  admit(job: Job, begun: BeginResult): StepResult | undefined;
}

export function recordGuard(
  records: RecordStore,
  options: { readonly leaseMs: number; readonly consumer: string },
): RecordGuard {
  const { leaseMs, consumer } = options;
  const waitUpToMs = Math.floor(leaseMs / 3);
  const begin = (job: Job) =>
    records.begin(job.envelope, {
      leaseMs,
      attempt: job.attempt,
      consumer,
      redrive: job.envelope.headers[REDRIVE_HEADER],
    });
  return {
    begin,
    waits: (begun) => begun.status === 'busy' && begun.retryAfterMs <= waitUpToMs,
    async waitOut(job, begun) {
      // Typically: the previous attempt died and its lock expired just before its lease did; a
      // transport retry would cost an attempt.
      await pause(begun.retryAfterMs + 2, job.abort.signal);
      return job.abort.signal.aborted ? begun : begin(job);
    },
    admit(job, begun) {
      if (begun.status === 'processed') return DUPLICATE;
      if (begun.status === 'dead-lettered') return ALREADY_DEAD_LETTERED;
      if (begun.status === 'busy') return { status: 'busy', retryAfterMs: begun.retryAfterMs };
      job.lease = { token: begun.token };
      return undefined;
    },
  };
}

const DUPLICATE: StepResult = { status: 'duplicate' };
const ALREADY_DEAD_LETTERED: StepResult = { status: 'already-dead-lettered' };

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
