import { OnceflowError } from '../errors.js';
import { createHandlerContext } from './context.js';
import type { LockDeps } from './lock.js';
import type { Step } from './pipeline.js';
import { parseEvent } from './schema.js';

/**
 * The innermost step: decodes and validates the payload, then calls the handler with its context.
 * Does not start the handler once the job's signal is aborted. Resolves `handled` when the
 * handler resolves; anything thrown goes to `verdict.ts` unchanged.
 * Records the handler's run time on the job.
 */
export function invokeHandler(deps: LockDeps): Step {
  return async (job) => {
    const handler = job.handler;
    if (handler === undefined) throw new OnceflowError('INTERNAL', 'no handler was routed');
    // Lock lost or shutdown while the guard was taking the lease: do not start the handler.
    if (job.abortedBy !== undefined) throw job.abort.signal.reason;
    const event = parseEvent(job.envelope, handler.schema);
    const ctx = createHandlerContext(job, deps);
    const started = deps.now();
    try {
      await handler.handle(event, ctx);
    } finally {
      job.handlerMs = deps.now() - started;
    }
    return { status: 'handled' };
  };
}
