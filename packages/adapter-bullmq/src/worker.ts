import type { Span } from 'bullmq';
import { DelayedError, type Job, type JobJson, Worker } from 'bullmq';

/**
 * Thrown by the processor once the adapter has moved the job itself: BullMQ then leaves the job
 * alone and fetches the next one (its documented contract for `DelayedError`).
 */
export const SETTLED = new DelayedError('settled by the onceflow adapter');

type Fetched = [jobData: JobJson, jobId: string, rateLimitDelay?: number, delayUntil?: number];

/**
 * A BullMQ `Worker` whose `ack` fetches the next job in the same script, as BullMQ's own
 * completion does (`moveToCompleted(…, fetchNext)`): one Redis round trip per acked job instead
 * of two (complete, then fetch). `complete` resolves once Redis recorded the completion; the job
 * it fetched (locked under the same token, as BullMQ does) is handed to the worker's loop when the
 * processor returns by throwing `SETTLED`. Without one (the queue was empty, the worker is
 * closing or at its concurrency) the loop fetches as before.
 */
export class AdapterWorker extends Worker<unknown, void> {
  /** The loop's "may fetch more" check of each running job, by lock token. */
  readonly #mayFetch = new Map<string, () => boolean>();
  /** The job an ack fetched, by the acked job's lock token, until its processor returns. */
  readonly #fetched = new Map<string, Fetched>();

  override async processJob(job: Job<unknown, void>, token: string, mayFetch = () => true) {
    this.#mayFetch.set(token, mayFetch);
    try {
      return await super.processJob(job, token, mayFetch);
    } finally {
      this.#mayFetch.delete(token);
      this.#fetched.delete(token); // a job fetched but not handed over stays active: redelivered
    }
  }

  /** `moveToCompleted`, fetching the next job when the loop would fetch one now. */
  async complete(job: Job<unknown, void>, token: string): Promise<void> {
    const fetchNext = !this.closing && !this.isPaused() && (this.#mayFetch.get(token)?.() ?? false);
    const next = await job.moveToCompleted(undefined, token, fetchNext);
    if (Array.isArray(next) && next[0]) this.#fetched.set(token, next as Fetched);
  }

  protected override async handleFailed(
    err: Error,
    job: Job<unknown, void>,
    token: string,
    mayFetch?: () => boolean,
    span?: Span,
  ): Promise<Job<unknown, void>> {
    // A fetched job means this one was acked (completed): hand the next over, whatever `err` is.
    const fetched = this.#fetched.get(token);
    if (!fetched) return super.handleFailed(err, job, token, mayFetch, span);
    const [jobData, jobId, rateLimitDelay, delayUntil] = fetched;
    // What BullMQ's own completion does with the fetch's answer (the next delayed job's time).
    const self = this as unknown as { updateDelays?: (limit?: number, until?: number) => void };
    self.updateDelays?.(rateLimitDelay, delayUntil);
    const next = await this.nextJobFromJobData(jobData, jobId, token);
    this.#fetched.delete(token); // only now: BullMQ retries this method if the line above threw
    return next;
  }
}
