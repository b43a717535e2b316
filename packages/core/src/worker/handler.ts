import type { z } from 'zod';
import type { HandlerContext } from './context.js';

/**
 * A handler for the events its `type` pattern routes to it. Its outcome decides the delivery's: resolve → the event is marked
 * processed and acked; throw → retried with backoff, or dead-lettered at once for
 * `NonRetryableError`; `RetryLaterError` → retried after its delay; `AlreadyProcessedError` → acked
 * as a duplicate. A handler may run more than once for one event (lock expiry, crash before the
 * ack): make external effects idempotent with `ctx.idempotencyKey(action)`.
 */
export interface EventHandler<E = unknown> {
  /**
   * The events this handler takes, `[source:]type`: an envelope `type` (`payment_intent.succeeded`,
   * any source), a source and type (`github:push`), or a pattern (`stripe:invoice.*`,
   * `*:payment.*`). See `createWorker` for the precedence rule.
   */
  readonly type: string;
  /** Validates the JSON payload; a failure dead-letters the event at once with the issues. */
  readonly schema?: z.ZodType<E> | undefined;
  handle(event: E, ctx: HandlerContext): Promise<void>;
}

/**
 * Declares a typed handler. With a zod `schema`, `event` is the schema's output; without one it
 * is the payload parsed as JSON (`unknown`).
 *
 * @example
 * const onPayment = defineHandler({
 *   type: 'payment_intent.succeeded',
 *   schema: z.object({ data: z.object({ object: z.object({ id: z.string(), amount: z.number() }) }) }),
 *   async handle(event, ctx) {
 *     await ledger.credit(event.data.object, { idempotencyKey: ctx.idempotencyKey('credit') });
 *   },
 * });
 */
export function defineHandler<S extends z.ZodType>(definition: {
  readonly type: string;
  readonly schema: S;
  // A property, not a method: TypeScript checks a method's parameters bivariantly, and would let
  // `handle(event: { amount: number })` through without a schema (test/types/define-handler.test-d.ts).
  readonly handle: (event: z.output<S>, ctx: HandlerContext) => Promise<void>;
}): EventHandler<z.output<S>>;
export function defineHandler(definition: {
  readonly type: string;
  readonly schema?: undefined;
  readonly handle: (event: unknown, ctx: HandlerContext) => Promise<void>;
}): EventHandler;
export function defineHandler(definition: EventHandler): EventHandler {
  return Object.freeze({
    type: definition.type,
    schema: definition.schema,
    handle: (event: unknown, ctx: HandlerContext) => definition.handle(event, ctx),
  });
}
