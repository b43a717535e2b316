// The worked example of docs/testing-kit.md, run as a test: keep the two in step.
import { defineHandler } from '@onceflow/core';
import { expect, test } from 'vitest';
import { z } from 'zod';
import { checkEffectivelyOnce, isEffectivelyOnceViolation, type SimEvent } from '../src/index.js';

/** A downstream API that, like Stripe, charges once per idempotency key (every time without one). */
class PaymentsApi {
  readonly charges = new Map<string, number>();
  total = 0;
  readonly #keys = new Set<string>();

  async charge(eventId: string, amount: number, options: { idempotencyKey?: string } = {}) {
    if (options.idempotencyKey !== undefined) {
      if (this.#keys.has(options.idempotencyKey)) return;
      this.#keys.add(options.idempotencyKey);
    }
    this.charges.set(eventId, (this.charges.get(eventId) ?? 0) + 1);
    this.total += amount;
  }
}

const payment = z.object({ amount: z.number() });

const buggy = (api: PaymentsApi) =>
  defineHandler({
    type: 'payment_intent.succeeded',
    schema: payment,
    handle: async (event, ctx) => {
      await api.charge(ctx.envelope.id, event.amount);
    },
  });

const fixed = (api: PaymentsApi) =>
  defineHandler({
    type: 'payment_intent.succeeded',
    schema: payment,
    handle: async (event, ctx) => {
      await api.charge(ctx.envelope.id, event.amount, {
        idempotencyKey: ctx.idempotencyKey('charge'),
      });
    },
  });

const events: SimEvent[] = [
  { id: 'evt_1', type: 'payment_intent.succeeded', key: 'cus_1', payload: { amount: 500 } },
  { id: 'evt_2', type: 'payment_intent.succeeded', key: 'cus_1', payload: { amount: 700 } },
];

const options = {
  events,
  setup: () => new PaymentsApi(),
  invariant: (api: PaymentsApi) => {
    for (const e of events) {
      const n = api.charges.get(e.id) ?? 0;
      if (n !== 1) return `${e.id} was charged ${n} times`;
    }
  },
};

test('the buggy handler fails with the timeline the docs show', async () => {
  const err = await checkEffectivelyOnce(buggy, { ...options, seed: 42 }).catch((e: unknown) => e);
  if (!isEffectivelyOnceViolation(err)) throw new Error('expected a violation');
  expect(err.message).toContain(
    [
      'timeline:',
      't=    0ms deliver evt_1 attempt 1 · lease taken · lock expires mid-handler (before-handler)',
      't=  100ms deliver evt_2 attempt 1 · lease taken · handler ran · completed · acked',
      't=30000ms deliver evt_1 attempt 2 · lease taken · handler ran · completed · acked',
      't=30000ms resume evt_1 attempt 1 · lock lost · handler ran · complete ignored: lease lost · ack refused: lock lost',
      'invariant: evt_1 was charged 2 times',
    ].join('\n'),
  );
});

test('the fixed handler passes', async () => {
  await checkEffectivelyOnce(fixed, options);
});
