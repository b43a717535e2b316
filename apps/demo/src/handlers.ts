import { NonRetryableError, defineHandler } from '@onceflow/core';
import { z } from 'zod';
import type { Ledger } from './stack.js';

/**
 * The demo's handlers: the same code runs on every broker. A payment event charges a customer
 * through the payments API (with `ctx.idempotencyKey`, so a redelivery never charges twice) and
 * then writes the ledger row, the processed mark and an outbound `payment.recorded` event (to the
 * outbox) in one transaction; the dispatcher publishes that event and the same worker handles it,
 * with a ledger row of its own.
 */
const paymentSucceeded = z.object({
  id: z.string(),
  type: z.literal('payment_intent.succeeded'),
  data: z.object({
    object: z.object({ id: z.string(), amount: z.number().int().positive(), customer: z.string() }),
  }),
});

/** The outbound event's id: one per payment event (its transaction runs once). */
export const recordedEventId = (paymentEventId: string): string => `${paymentEventId}.recorded`;
export const OUTBOUND_SOURCE = 'demo-ledger';

const paymentRecorded = z.object({
  payment: z.string(),
  customer: z.string(),
  amount: z.number().int().positive(),
  chargeId: z.string(),
});

const push = z.object({
  after: z.string(),
  repository: z.object({ full_name: z.string() }),
});

export function demoHandlers(deps: {
  ledger: Ledger;
  paymentsUrl: string;
  /** Called after a charge was made and before the ledger row and processed mark are written. */
  onCharged?: (() => void) | undefined;
  /** Add the outbound `payment.recorded` event in the payment's transaction (default true). */
  outbound?: boolean | undefined;
}) {
  return [
    defineHandler({
      type: 'payment_intent.succeeded',
      schema: paymentSucceeded,
      handle: async (event, ctx) => {
        const { amount, customer } = event.data.object;
        if (customer === 'cus_blocked') throw new NonRetryableError('customer is blocked');
        if (customer === 'cus_always_fails') throw new Error('card processor keeps timing out');
        const res = await fetch(`${deps.paymentsUrl}/v1/charges`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': ctx.idempotencyKey('charge'),
          },
          body: JSON.stringify({ eventId: event.id, amount, customer }),
          signal: ctx.signal,
        });
        if (!res.ok) throw new Error(`payments API answered ${res.status}`);
        const charge = (await res.json()) as { id: string };
        deps.onCharged?.();
        await deps.ledger.record(ctx, {
          amount,
          chargeId: charge.id,
          outbound:
            deps.outbound === false
              ? undefined
              : {
                  id: recordedEventId(ctx.envelope.id),
                  source: OUTBOUND_SOURCE,
                  type: 'payment.recorded',
                  key: customer,
                  payload: { payment: ctx.envelope.id, customer, amount, chargeId: charge.id },
                },
        });
      },
    }),
    defineHandler({
      type: 'payment.recorded',
      schema: paymentRecorded,
      handle: async (event, ctx) => {
        await deps.ledger.record(ctx, { amount: event.amount, chargeId: event.chargeId });
      },
    }),
    defineHandler({
      type: 'push',
      schema: push,
      handle: async (event, ctx) => {
        await deps.ledger.record(ctx, { amount: null, chargeId: event.after });
      },
    }),
  ];
}
