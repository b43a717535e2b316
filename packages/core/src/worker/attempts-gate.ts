import type { Job } from './job.js';
import type { StepResult } from './pipeline.js';

/**
 * Refuses to run a delivery that arrives with `attempt > maxAttempts`: a crash loop (the process
 * dies inside the handler, so nothing settles) or repeated lock expiry would otherwise run it
 * forever. It is dead-lettered as `attempts exhausted` without running the handler; `undefined`
 * lets the job run.
 *
 * It sits after the processed-guard on purpose: an event already processed is acked, and one
 * whose lease another attempt still holds is retried (busy), so a long first attempt is never
 * dead-lettered by its own redeliveries. Every redelivery raises the transport's attempt number,
 * busy retries and `RetryLaterError` retries included, although neither counts as a failure:
 * once such an event's lease is free and `attempt > maxAttempts`, it is dead-lettered here. Size
 * `maxAttempts` with that in mind. (A lease about to expire, the usual crash case, is waited out
 * in process by the guard and costs no attempt.)
 */
export function attemptsGate(maxAttempts: number): (job: Job) => StepResult | undefined {
  return (job) => (job.attempt > maxAttempts ? EXHAUSTED : undefined);
}

const EXHAUSTED: StepResult = { status: 'exhausted' };
