import type { ProcessedStore } from '../contracts/inbox.js';
import { isOnceflowError } from '../errors.js';
import type { Job } from './job.js';
import type { Middleware } from './pipeline.js';

/**
 * The worker's dedupe layer: takes the processing lease for (source, id) before anything runs.
 * `processed` → `duplicate` (acked, handler not run); `busy` (another attempt holds a live lease,
 * e.g. the first delivery still running after its transport lock expired) → `busy`, retried after
 * the store's `retryAfterMs` (a lease that ends within `leaseMs / 3` is first waited out once,
 * holding the delivery); `acquired` → runs the rest of the pipeline, then `complete`s the
 * lease when the handler resolved and `release`s it otherwise, so a retry can acquire it.
 *
 * A handler's `AlreadyProcessedError` (its same-transaction mark found another attempt had won)
 * completes the lease: the event is processed, whoever did it.
 *
 * If `complete` fails after the handler resolved, the delivery is still acked: running the handler
 * again is the worse outcome. The lease then expires on its own, and only a re-publish of the
 * same event would run it again (handler idempotency keys cover that case).
 */
export function processedGuard(store: ProcessedStore, leaseMs: number): Middleware {
  const waitUpToMs = Math.floor(leaseMs / 3);
  return (next) => async (job) => {
    const { source, id } = job.envelope;
    let begun = await store.begin(source, id, { leaseMs });
    // A lease about to expire (typically: the previous attempt died and its lock expired just
    // before its lease did) is waited out once, in process: a transport retry would cost an attempt.
    if (begun.status === 'busy' && begun.retryAfterMs <= waitUpToMs) {
      await pause(begun.retryAfterMs + 2, job.abort.signal);
      if (!job.abort.signal.aborted) begun = await store.begin(source, id, { leaseMs });
    }
    if (begun.status === 'processed') return { status: 'duplicate' };
    if (begun.status === 'busy') return { status: 'busy', retryAfterMs: begun.retryAfterMs };
    const token = begun.token;
    job.lease = { token };
    try {
      const result = await next(job);
      if (result.status === 'handled')
        await quietly(job, 'complete', () => store.complete(source, id, token));
      else await quietly(job, 'release', () => store.release(source, id, token));
      return result;
    } catch (err) {
      if (isOnceflowError(err, 'ALREADY_PROCESSED')) {
        await quietly(job, 'complete', () => store.complete(source, id, token));
      } else {
        await quietly(job, 'release', () => store.release(source, id, token));
      }
      throw err;
    }
  };
}

async function quietly(
  job: Job,
  op: 'complete' | 'release',
  call: () => Promise<void>,
): Promise<void> {
  try {
    await call();
  } catch (err) {
    job.log.warn({ err }, `processed store ${op} failed; the processing lease will expire`);
  }
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
