import type { Envelope } from '@onceflow/core';
import { expect } from 'vitest';
import { NON_UTF8_BYTES, sameBytes, testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup } from '../scenario.js';

function expectSameEnvelope(got: Envelope, sent: Envelope): void {
  expect({ ...got, payload: undefined }).toEqual({ ...sent, payload: undefined });
  expect(got.key).toBe(sent.key);
  expect(got.occurredAt).toBe(sent.occurredAt);
  expect(sameBytes(got.payload, sent.payload), `payload bytes of ${sent.id}`).toBe(true);
}

/** Publish → consume round trip (with no start()), settlement idempotency, the unsettled-handler rule. */
export const deliveryScenarios: ScenarioGroup = () => [
  {
    name: 'round-trips every envelope field, raw payload bytes and headers',
    proves: [],
    async run({ fixture, t }) {
      await using fx = await fixture(); // never started: publish and consume need no start()
      expect(fx.transport.name, 'the transport names its broker in a word').toMatch(/^\S+$/);
      const sent = [
        testEnvelope({
          key: 'cus_9',
          payload: NON_UTF8_BYTES,
          headers: {
            traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
            'x-note': 'ünïcødé ✓',
          },
          occurredAt: '2024-05-01T12:00:00.000Z',
          receivedAt: '2024-05-01T12:00:01.250Z',
        }),
        testEnvelope({ payload: { amount: 4200, currency: 'eur', nested: { ok: true } } }),
        testEnvelope({ type: 'text.event', payload: 'plain text, emoji 🎉, quotes "\'\\' }),
      ];
      const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
      const abortedAtReceipt: boolean[] = [];
      spy.setBehaviour(async (d) => {
        abortedAtReceipt.push(d.signal.aborted);
        await d.ack();
      });
      await fx.consume(spy.handler(), { concurrency: 3 });
      await fx.publish(...sent); // one batch
      for (const envelope of sent) {
        const got = await spy.waitFor(envelope.id, 'processed');
        expect(got.attempt).toBe(1);
        expectSameEnvelope(got.delivery.envelope, envelope);
      }
      expect(abortedAtReceipt).toEqual([false, false, false]);
    },
  },
  {
    name: 'settling is idempotent: the first of ack and retry wins',
    proves: [],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const ackFirst = testEnvelope();
      const retryFirst = testEnvelope();
      const spy = createHandlerSpy(
        async (d) => {
          if (d.envelope.id === ackFirst.id) {
            await d.ack();
            await d.retry({ delayMs: 0 });
            await d.ack();
          } else if (d.attempt === 1) {
            await d.retry({ delayMs: 0 });
            await d.ack();
          } else {
            await d.ack();
          }
        },
        { timeoutMs: t.deliveryMs },
      );
      await fx.consume(spy.handler(), { concurrency: 2 });
      await fx.publish(ackFirst, retryFirst);
      await spy.waitFor(ackFirst.id, 'returned');
      await spy.waitFor(retryFirst.id, 'processed', { attempt: 2 });
      await sleep(t.quietMs);
      expect(spy.count('received', ackFirst.id), 'an acked message is not redelivered').toBe(1);
      expect(spy.count('received', retryFirst.id), 'the retry won over the later ack').toBe(2);
    },
  },
  {
    name: 'a handler that throws or returns without settling is redelivered at once with attempt + 1',
    proves: [],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const throws = testEnvelope();
      const forgets = testEnvelope();
      const spy = createHandlerSpy(
        async (d) => {
          if (d.attempt > 1) return d.ack();
          if (d.envelope.id === throws.id) throw new Error('handler failed');
        },
        { timeoutMs: t.deliveryMs },
      );
      await fx.consume(spy.handler(), { concurrency: 2 });
      await fx.publish(throws, forgets);
      const [first, second] = [
        await spy.waitFor(throws.id, 'processed', { attempt: 2 }),
        await spy.waitFor(forgets.id, 'processed', { attempt: 2 }),
      ];
      expect(first.attempt).toBe(2);
      expect(second.attempt).toBe(2);
      expect(spy.count('threw', throws.id)).toBe(1);
    },
  },
];
