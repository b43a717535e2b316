import type { Delivery } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import type { Logger } from '../observability/logger.js';
import type { EventHandler } from './handler.js';

/**
 * One delivery on its way through the worker's middleware. Created per delivery, touched by one
 * async flow only (no locking needed); middleware record what later steps need on it.
 */
export interface Job {
  readonly delivery: Delivery;
  readonly envelope: Envelope;
  readonly attempt: number;
  /** The handler registered for `envelope.type`, if any. */
  readonly handler: EventHandler | undefined;
  /** Child logger carrying eventId, eventType, source and attempt. */
  readonly log: Logger;
  /** Aborted on lock loss, processing-lease loss, or shutdown after the drain limit. */
  readonly abort: AbortController;
  /**
   * Why `abort` fired, once it has; set before `abort.abort()` is called, so check it rather than
   * `abort.signal` (Node creates the signal on first read). `shutdown` makes an interrupted
   * failure a free retry.
   */
  abortedBy: 'lock-lost' | 'shutdown' | undefined;
  /** The processed-guard's lease, once acquired. */
  lease: { readonly token: string } | undefined;
  /** Until when (per the worker's clock) the transport lock is known to be held. */
  lockUntil: number;
  /** Handler run time in ms, once the handler has been called. */
  handlerMs: number | undefined;
}

/**
 * What a step reports when it returns; throwing reports an error. `outcome.ts` turns either into
 * ack, retry or dead-letter.
 */
export type StepResult =
  /** The handler resolved and the event is marked processed. */
  | { readonly status: 'handled' }
  /** An earlier attempt completed this event. */
  | { readonly status: 'duplicate' }
  /** Another attempt holds the processing lease right now. */
  | { readonly status: 'busy'; readonly retryAfterMs: number }
  /** `attempt > maxAttempts` on arrival: not run. */
  | { readonly status: 'exhausted' }
  /** No handler for the type; `unknownType` decides between these two. */
  | { readonly status: 'unroutable'; readonly type: string }
  | { readonly status: 'ignored' };

export type Step = (job: Job) => Promise<StepResult>;

/** Policy around a step, as in Watermill's `HandlerMiddleware`. */
export type Middleware = (next: Step) => Step;

/** `compose([a, b], final)` runs a → b → final; the first middleware is the outermost. */
export function compose(middleware: readonly Middleware[], final: Step): Step {
  return middleware.reduceRight<Step>((next, mw) => mw(next), final);
}
