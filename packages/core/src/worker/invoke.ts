import { OnceflowError } from '../errors.js';
import { traceHandler } from '../observability/trace-delivery.js';
import { createHandlerContext } from './context.js';
import type { EventHandler } from './handler.js';
import type { LockDeps } from './lock.js';
import { composeHandler, type HandlerMiddleware, type HandlerStep } from './middleware.js';
import type { Step, StepResult } from './pipeline.js';

const HANDLED: StepResult = { status: 'handled' };

/**
 * The innermost step: runs the handler, inside the user's `middleware`, with its context (the
 * payload is decoded and validated there). Does not start once the job's signal is aborted.
 * Resolves `handled` when that chain resolves; anything thrown goes to `verdict.ts` unchanged.
 * Records the chain's run time on the job.
 */
export function invokeHandler(deps: LockDeps, middleware: readonly HandlerMiddleware[]): Step {
  const chains = new Map<EventHandler, HandlerStep>();
  return async (job) => {
    const handler = job.handler;
    if (handler === undefined) throw new OnceflowError('INTERNAL', 'no handler was routed');
    // Lock lost or shutdown while the guard was taking the lease: do not start the handler.
    if (job.abortedBy !== undefined) throw job.abort.signal.reason;
    let chain = chains.get(handler);
    if (chain === undefined) {
      chain = composeHandler(middleware, handler);
      chains.set(handler, chain);
    }
    const ctx = createHandlerContext(job, deps);
    const started = deps.now();
    try {
      await traceHandler(job.delivery, handler.type, chain, ctx);
    } finally {
      job.handlerMs = deps.now() - started;
    }
    return HANDLED;
  };
}
