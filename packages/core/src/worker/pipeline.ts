import type { Job } from './job.js';

/**
 * What a step reports when it returns; throwing reports an error. `verdict.ts` turns either into
 * ack, retry or dead-letter.
 */
export type StepResult =
  /** The handler resolved and the event is marked processed. */
  | { readonly status: 'handled' }
  /** An earlier attempt completed this event. */
  | { readonly status: 'duplicate' }
  /** The event record already holds this event as a dead letter (a copy the broker kept). */
  | { readonly status: 'already-dead-lettered' }
  /** The message was not a wire-format envelope (`decodeDelivery`): `reason` says why. */
  | { readonly status: 'undecodable'; readonly reason: string }
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
