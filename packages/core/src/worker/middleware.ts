import type { HandlerContext } from './context.js';
import type { EventHandler } from './handler.js';
import { parseEvent } from './schema.js';

/**
 * The handler as a step sees it: given the delivery's context, it decodes the payload (a
 * `SchemaError` for a bad one) and runs the handler; it resolves when the handler resolved and
 * rejects with what it threw.
 */
export type HandlerStep = (ctx: HandlerContext) => Promise<void>;

/**
 * Your own step around the handler (a timeout, tracing, timing), as Watermill's
 * `HandlerMiddleware`: it gets the next step and returns a step. Steps are composed once per
 * handler; the first in `WorkerConfig.middleware` is the outermost.
 *
 * They run only for a delivery whose handler is about to run: after the unknown-type check, the
 * processed-guard (duplicates and events another attempt is running never reach them), the
 * attempts gate and the heartbeat (the locks are kept alive while they run). Not once the job's
 * signal is aborted before the handler starts.
 *
 * A step's outcome is the handler's: resolve → the event is marked processed and acked (also when
 * the step did not call `next`); throw → decided as a handler's throw (`RetryLaterError`,
 * `NonRetryableError`, backoff…). Call `next` at most once and await it: a step that returns
 * while the handler still runs lets a retry run it alongside. A step may pass `next` a context of
 * its own (`{ ...ctx, log }`): the handler gets that one, and the payload is decoded from its
 * `envelope`. A step cannot stop a handler that ignores `ctx.signal`.
 *
 * @example
 * // Aborts the handler's signal after `ms`; an overrun is retried 30 s later.
 * const timeout =
 *   (ms: number): HandlerMiddleware =>
 *   (next) =>
 *   async (ctx) => {
 *     const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ms)]);
 *     try {
 *       await next({ ...ctx, signal });
 *     } catch (err) {
 *       if (!signal.aborted || ctx.signal.aborted) throw err;
 *       throw new RetryLaterError(30_000, `${ctx.envelope.type}: handler took over ${ms} ms`);
 *     }
 *   };
 * createWorker({ transport, processed, handlers, middleware: [timeout(10_000)] });
 */
export type HandlerMiddleware = (next: HandlerStep) => HandlerStep;

/** `handler` wrapped in `middleware`, the first outermost. */
export function composeHandler(
  middleware: readonly HandlerMiddleware[],
  handler: EventHandler,
): HandlerStep {
  // Not async: the handler's own promise is the step's (it may resolve to a value; nothing reads it).
  const call: HandlerStep = (ctx) => {
    try {
      return Promise.resolve(handler.handle(parseEvent(ctx.envelope, handler.schema), ctx));
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return middleware.reduceRight<HandlerStep>((next, mw) => mw(next), call);
}
