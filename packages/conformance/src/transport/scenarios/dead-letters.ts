import type { DeadLetter, ErrorInfo } from '@onceflow/core';
import { expect } from 'vitest';
import { sameBytes, testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup } from '../scenario.js';

const MAX_ATTEMPTS = 3;
const failure = (message: string): ErrorInfo => ({ code: 'INTERNAL', name: 'TypeError', message });
const schema: ErrorInfo = {
  code: 'SCHEMA',
  name: 'SchemaError',
  message: 'amount: expected number',
};

function expectRecent(letter: DeadLetter): void {
  const at = Date.parse(letter.deadLetteredAt);
  expect(Number.isNaN(at), `deadLetteredAt is ISO-8601: ${letter.deadLetteredAt}`).toBe(false);
  expect(Math.abs(Date.now() - at)).toBeLessThan(60_000);
}

/** Dead-lettering (on exhaustion, explicit) and the dead-letter API. */
export const deadLetterScenarios: ScenarioGroup = () => [
  {
    name: `dead-letters with reason, attempts and last error when ${MAX_ATTEMPTS} attempts are exhausted`,
    proves: [],
    async run({ fixture, t, longLockMs }) {
      await using fx = await fixture();
      const event = testEnvelope({ payload: new Uint8Array([1, 2, 3, 255]) });
      const spy = createHandlerSpy(
        async (d) => {
          const error = failure(`attempt ${d.attempt} failed`);
          if (d.attempt < MAX_ATTEMPTS) return d.retry({ delayMs: 0, error });
          return d.deadLetter({ reason: 'attempts exhausted', error });
        },
        { timeoutMs: t.deliveryMs },
      );
      await fx.consume(spy.handler(), { concurrency: 1, lockMs: longLockMs });
      await fx.publish(event);
      await spy.waitFor(event.id, 'dead-lettered');
      const [letter, ...rest] = await fx.transport.deadLetters.list();
      expect(rest).toEqual([]);
      expect(letter?.envelope.id).toBe(event.id);
      expect(letter && sameBytes(letter.envelope.payload, event.payload)).toBe(true);
      expect(letter?.envelope.payloadHash).toBe(event.payloadHash);
      expect(letter).toMatchObject({
        reason: 'attempts exhausted',
        attempts: MAX_ATTEMPTS,
        lastError: failure(`attempt ${MAX_ATTEMPTS} failed`),
      });
      if (letter) expectRecent(letter);
      expect(await fx.transport.deadLetters.count()).toBe(1);
      await sleep(t.quietMs);
      expect(spy.count('received', event.id), 'nothing delivered after dead-lettering').toBe(
        MAX_ATTEMPTS,
      );
    },
  },
  {
    name: 'deadLetter() skips the remaining attempts and keeps reason, attempts and last error',
    proves: [],
    async run({ fixture, t, longLockMs }) {
      await using fx = await fixture();
      const bad = testEnvelope();
      const plain = testEnvelope();
      const spy = createHandlerSpy(
        async (d) => {
          if (d.envelope.id === plain.id) return d.deadLetter({ reason: 'no handler for type' });
          if (d.attempt === 1) return d.retry({ delayMs: 0, error: failure('timeout') });
          return d.deadLetter({ reason: 'schema: amount must be a number', error: schema });
        },
        { timeoutMs: t.deliveryMs },
      );
      await fx.consume(spy.handler(), { concurrency: 2, lockMs: longLockMs });
      await fx.publish(bad, plain);
      await spy.waitFor(bad.id, 'dead-lettered');
      await spy.waitFor(plain.id, 'dead-lettered');
      const letters = await fx.transport.deadLetters.list();
      const byId = new Map(letters.map((l) => [l.envelope.id, l]));
      expect(byId.get(bad.id)).toMatchObject({
        reason: 'schema: amount must be a number',
        attempts: 2,
        lastError: schema,
      });
      expect(byId.get(plain.id)).toMatchObject({ reason: 'no handler for type', attempts: 1 });
      await sleep(t.quietMs);
      expect(spy.count('received', bad.id)).toBe(2);
      expect(spy.count('received', plain.id)).toBe(1);
    },
  },
  {
    name: 'the dead-letter store lists oldest first, gets by id, counts, redrives with attempt 1 and purges',
    proves: [],
    async run({ fixture, t, longLockMs }) {
      await using fx = await fixture();
      const events = [testEnvelope(), testEnvelope(), testEnvelope()];
      const spy = createHandlerSpy((d) => d.deadLetter({ reason: `bad ${d.envelope.id}` }), {
        timeoutMs: t.deliveryMs,
      });
      await fx.consume(spy.handler(), { concurrency: 1, lockMs: longLockMs });
      for (const e of events) {
        await fx.publish(e);
        await spy.waitFor(e.id, 'dead-lettered');
      }
      const store = fx.transport.deadLetters;
      const all = await store.list();
      expect(
        all.map((l) => l.envelope.id),
        'oldest first',
      ).toEqual(events.map((e) => e.id));
      expect(all.map((l) => l.reason)).toEqual(events.map((e) => `bad ${e.id}`));
      expect(new Set(all.map((l) => l.id)).size).toBe(3);
      expect((await store.list({ limit: 2 })).map((l) => l.id)).toEqual(
        all.slice(0, 2).map((l) => l.id),
      );
      const [first, second, third] = all as [DeadLetter, DeadLetter, DeadLetter];
      expect(await store.get(second.id)).toEqual(second);
      expect(await store.get('onceflow-no-such-dead-letter')).toBeUndefined();
      expect(await store.count()).toBe(3);

      spy.setBehaviour((d) => d.ack());
      expect(await store.redrive([first.id])).toBe(1);
      const redriven = await spy.waitFor(first.envelope.id, 'processed');
      expect(redriven.attempt, 'a redriven message starts again at attempt 1').toBe(1);
      expect(await store.get(first.id)).toBeUndefined();
      expect(await store.count()).toBe(2);

      expect(await store.purge([second.id, 'onceflow-no-such-dead-letter'])).toBe(1);
      expect(await store.get(second.id)).toBeUndefined();
      expect(await store.count()).toBe(1);

      expect(await store.redrive()).toBe(1);
      expect((await spy.waitFor(third.envelope.id, 'processed')).attempt).toBe(1);
      expect(await store.count()).toBe(0);
      expect(await store.purge()).toBe(0);
      expect(await store.redrive([first.id])).toBe(0);
      await sleep(t.quietMs);
      expect(spy.count('received', second.envelope.id), 'a purged message is gone').toBe(1);
    },
  },
];
