import { traceHandler } from '../observability/trace-delivery.js';
import { createHandlerContext } from './context.js';
import type { EventHandler } from './handler.js';
import type { Job } from './job.js';
import type { LockDeps } from './lock.js';
import { composeHandler, type HandlerMiddleware } from './middleware.js';

/** Runs one job's handler (inside the user's middleware); resolves or rejects as that chain does. */
export type Invoke = (job: Job) => Promise<unknown>;

/**
 * Plans the innermost step for one handler, once: its `middleware` chain is composed here (none:
 * the handler is called directly), and each call builds the job's context (the payload is decoded
 * and validated inside the chain) and runs the chain, in a `handle` span only when the delivery's
 * `process` span records. Anything thrown goes to `verdict.ts` unchanged.
 */
export function planHandler(
  handler: EventHandler,
  middleware: readonly HandlerMiddleware[],
  deps: LockDeps,
): Invoke {
  const chain = composeHandler(middleware, handler);
  const { type } = handler;
  return (job) => traceHandler(job.delivery, type, chain, createHandlerContext(job, deps));
}
