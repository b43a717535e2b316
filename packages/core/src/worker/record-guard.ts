import type { RecordStore } from '../contracts/records.js';
import { REDRIVE_HEADER } from '../records/dead-letter-actions.js';
import type { Middleware } from './pipeline.js';

/**
 * The worker's dedupe layer: takes the processing lease on the event record for (source, id)
 * before anything runs. `processed` → `duplicate` (acked, handler not run); `dead-lettered` (the
 * record holds it as a dead letter: a copy the broker kept after the worker recorded it) →
 * acked; `busy` (another attempt holds a live lease, e.g. the first delivery still running after
 * its transport lock expired) → retried after the store's `retryAfterMs` (a lease that ends
 * within `leaseMs / 3` is first waited out once, holding the delivery); `acquired` → the rest of
 * the pipeline runs with `job.lease` set. Writing the attempt's end on the record (completed,
 * retry-scheduled, dead-lettered, released) is `applyVerdict`'s, before it settles with the broker.
 *
 * A redriven copy (header `x-onceflow-redrive`) acquires a dead-lettered record.
 */
export function recordGuard(
  records: RecordStore,
  options: { readonly leaseMs: number; readonly consumer: string },
): Middleware {
  const { leaseMs, consumer } = options;
  const waitUpToMs = Math.floor(leaseMs / 3);
  return (next) => async (job) => {
    const { envelope } = job;
    const redrive = envelope.headers[REDRIVE_HEADER];
    const beginOptions = { leaseMs, attempt: job.attempt, consumer, redrive };
    let begun = await records.begin(envelope, beginOptions);
    // A lease about to expire (typically: the previous attempt died and its lock expired just
    // before its lease did) is waited out once, in process: a transport retry would cost an attempt.
    if (begun.status === 'busy' && begun.retryAfterMs <= waitUpToMs) {
      await pause(begun.retryAfterMs + 2, job.abort.signal);
      if (!job.abort.signal.aborted) begun = await records.begin(envelope, beginOptions);
    }
    if (begun.status === 'processed') return { status: 'duplicate' };
    if (begun.status === 'dead-lettered') return { status: 'already-dead-lettered' };
    if (begun.status === 'busy') return { status: 'busy', retryAfterMs: begun.retryAfterMs };
    job.lease = { token: begun.token };
    // Awaited: an async function that returns a promise waits two more microtask turns.
    return await next(job);
  };
}

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
