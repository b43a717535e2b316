import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { Envelope } from '../../src/envelope.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { type EventHandler, defineHandler } from '../../src/worker/handler.js';

const payment = z.object({ id: z.string(), amount: z.number() });

describe('defineHandler with a schema', () => {
  it('types the event as the schema’s output', () => {
    const handler = defineHandler({
      type: 'payment.succeeded',
      schema: payment,
      async handle(event) {
        expectTypeOf(event).toEqualTypeOf<{ id: string; amount: number }>();
      },
    });
    expectTypeOf(handler).toEqualTypeOf<EventHandler<{ id: string; amount: number }>>();
  });

  it('types the event as the output of a transform, not its input', () => {
    const cents = z.object({ amount: z.string() }).transform((o) => ({ cents: Number(o.amount) }));
    const handler = defineHandler({
      type: 'payment.succeeded',
      schema: cents,
      async handle(event) {
        expectTypeOf(event).toEqualTypeOf<{ cents: number }>();
        expectTypeOf(event).not.toHaveProperty('amount');
      },
    });
    expectTypeOf(handler).toEqualTypeOf<EventHandler<{ cents: number }>>();
  });

  it('types a defaulted field as present, and a coerced one as its output', () => {
    const order = z.object({ currency: z.string().default('eur'), total: z.coerce.number() });
    expectTypeOf<z.input<typeof order>>().toEqualTypeOf<{ currency?: string; total: unknown }>();
    defineHandler({
      type: 'order.created',
      schema: order,
      async handle(event) {
        expectTypeOf(event).toEqualTypeOf<{ currency: string; total: number }>();
      },
    });
  });

  it('accepts a handler that takes a wider event than the schema gives', () => {
    defineHandler({ type: 'payment.succeeded', schema: payment, handle: async (_: unknown) => {} });
  });

  it('rejects a handler whose event type the schema does not give', () => {
    defineHandler({
      type: 'payment.succeeded',
      schema: payment,
      // @ts-expect-error amount is a number
      async handle(_: { id: string; amount: string }) {},
    });
    defineHandler({
      type: 'payment.succeeded',
      schema: payment,
      // @ts-expect-error the schema gives no `note`
      async handle(_: { id: string; amount: number; note: string }) {},
    });
    defineHandler({
      type: 'payment.succeeded',
      schema: payment,
      async handle(event) {
        // @ts-expect-error the schema gives no `note`
        event.note;
      },
    });
  });
});

describe('defineHandler without a schema', () => {
  it('types the event as unknown', () => {
    const handler = defineHandler({
      type: 'ping',
      async handle(event) {
        expectTypeOf(event).toBeUnknown();
      },
    });
    expectTypeOf(handler).toEqualTypeOf<EventHandler<unknown>>();
  });

  it('rejects a handler that claims a typed event', () => {
    defineHandler({
      type: 'ping',
      // @ts-expect-error without a schema nothing checks the payload: the event is unknown
      async handle(_: { amount: number }) {},
    });
  });
});

describe('defineHandler’s context and signature', () => {
  it('types ctx as the HandlerContext', () => {
    defineHandler({
      type: 'payment.succeeded',
      schema: payment,
      async handle(_, ctx) {
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext>();
        expectTypeOf(ctx.envelope).toEqualTypeOf<Envelope>();
        expectTypeOf(ctx.attempt).toEqualTypeOf<number>();
        expectTypeOf(ctx.signal).toEqualTypeOf<AbortSignal>();
        expectTypeOf(ctx.idempotencyKey).toEqualTypeOf<(action: string) => string>();
        expectTypeOf(ctx.renewLock).toEqualTypeOf<() => Promise<void>>();
      },
    });
  });

  it('rejects a handler that does not return a promise', () => {
    // @ts-expect-error handle must be async (return a Promise)
    defineHandler({ type: 'ping', handle: (_: unknown) => undefined });
  });

  it('rejects a handler that wants more than (event, ctx)', () => {
    defineHandler({
      type: 'ping',
      // @ts-expect-error a third parameter is never passed
      handle: async (_e: unknown, _c: HandlerContext, _x: string) => {},
    });
  });

  it('rejects a definition without a type, or with a schema that is not zod', () => {
    // @ts-expect-error `type` is required
    defineHandler({ async handle() {} });
    // @ts-expect-error the schema must be a zod schema
    defineHandler({ type: 'ping', schema: { parse: (v: unknown) => v }, async handle() {} });
  });
});
