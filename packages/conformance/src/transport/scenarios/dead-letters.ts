import type { BrokerDeadLetters, Transport } from '@onceflow/core';
import { expect } from 'vitest';
import { NON_UTF8_BYTES, sameBytes, testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

const deadLettersOf = (transport: Transport): BrokerDeadLetters => {
  const t = transport as Partial<BrokerDeadLetters>;
  expect(
    typeof t.consumeDeadLetters,
    'a transport that declares deliveryLimit reads its dead letters back (BrokerDeadLetters)',
  ).toBe('function');
  return t as BrokerDeadLetters;
};

const movesPastLimit = (limit: number): TransportScenario => ({
  name: `after deliveryLimit (${limit}) deliveries a message moves to the broker’s dead letters, read back whole by consumeDeadLetters with attempt ${limit} (the deliveries it had), and only on its own queue`,
  proves: ['deliveryLimit'],
  async run({ fixture, t }) {
    // Another queue's dead-letter reader, subscribed first: it must never see this queue's letters.
    await using elsewhere = await fixture();
    const strangers = createHandlerSpy((d) => d.ack(), { timeoutMs: t.deliveryMs });
    const strangersSub = await deadLettersOf(elsewhere.transport).consumeDeadLetters(
      strangers.handler('other queue'),
      { concurrency: 1 },
    );
    await using fx = await fixture();
    const event = testEnvelope({ payload: NON_UTF8_BYTES, key: 'k-1' });
    const spy = createHandlerSpy((d) => d.retry({ delayMs: 0 }), { timeoutMs: t.deliveryMs });
    // Room for a second handler: a message moved to the dead letters must not be delivered again.
    await fx.consume(spy.handler('work'), { concurrency: 2 });
    await fx.publish(event);
    await spy.waitFor(event.id, 'retried', { attempt: limit, timeoutMs: t.deliveryMs * 4 });
    const letters = createHandlerSpy((d) => d.ack(), { timeoutMs: t.deliveryMs * 2 });
    const sub = await deadLettersOf(fx.transport).consumeDeadLetters(letters.handler('dlq'), {
      concurrency: 1,
    });
    const letter = await letters.waitFor(event.id, 'processed');
    const got = letter.delivery.envelope;
    expect({ ...got, payload: undefined }).toEqual({ ...event, payload: undefined });
    expect(sameBytes(got.payload, event.payload), 'payload bytes kept').toBe(true);
    expect(letter.attempt, 'a dead letter’s attempt: the deliveries it had').toBe(limit);
    await sleep(t.quietMs);
    expect(spy.count('received', event.id), 'no delivery past the limit').toBe(limit);
    expect(strangers.count('received'), 'dead letters read on another queue').toBe(0);
    await sub.close();
    await strangersSub.close();
  },
});

/**
 * The last delivery is left unsettled by a consumer that is closing, so the message passes its
 * limit while no consumer runs. The next consumer must move it to the dead letters and go on to
 * the message behind it on the same key, with nothing else happening on the queue.
 */
const diesWhileStopped = (limit: number): TransportScenario => ({
  name: 'a message past deliveryLimit while no consumer runs moves to the dead letters when one starts, and the next message of its key follows',
  proves: ['deliveryLimit'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const dying = testEnvelope({ key: 'k-dies' });
    const next = testEnvelope({ key: 'k-dies' });
    const stopping = fx.gate();
    const spy = createHandlerSpy(
      async (d, { consumer }) => {
        if (d.envelope.id !== dying.id) return d.ack();
        if (consumer !== 'before') throw new Error('delivered past its deliveryLimit');
        if (d.attempt < limit) return d.retry({ delayMs: 0 });
        await stopping.opened; // the process is stopping: leave the last delivery unsettled
      },
      { timeoutMs: t.deliveryMs * 4 },
    );
    const before = await fx.open();
    const sub = await fx.consume(spy.handler('before'), { concurrency: 1 }, before);
    await fx.publish(dying, next);
    await spy.waitFor(dying.id, 'received', { attempt: limit });
    const closing = sub.close();
    stopping.open();
    await closing;
    await before.close();

    await fx.consume(spy.handler('after'), { concurrency: 1 });
    await spy.waitFor(next.id, 'processed');
    const letters = createHandlerSpy((d) => d.ack(), { timeoutMs: t.deliveryMs * 2 });
    const sub2 = await deadLettersOf(fx.transport).consumeDeadLetters(letters.handler('dlq'), {
      concurrency: 1,
    });
    const letter = await letters.waitFor(dying.id, 'processed');
    expect(letter.attempt, 'a dead letter’s attempt: the deliveries it had').toBe(limit);
    expect(spy.count('received', dying.id), 'deliveries of the dead letter').toBe(limit);
    await sub2.close();
  },
});

const keepsTrying: TransportScenario = {
  name: 'without a deliveryLimit a message is delivered again however often it is retried',
  proves: ['deliveryLimit'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const event = testEnvelope();
    const spy = createHandlerSpy((d) => (d.attempt < 12 ? d.retry({ delayMs: 0 }) : d.ack()), {
      timeoutMs: t.deliveryMs * 4,
    });
    await fx.consume(spy.handler(), { concurrency: 1 });
    await fx.publish(event);
    const done = await spy.waitFor(event.id, 'processed');
    expect(done.attempt).toBe(12);
  },
};

/** The broker's own dead-letter destination, the safety net behind the event record. */
export const deadLetterScenarios: ScenarioGroup = (caps) => [
  ...(caps.deliveryLimit === false
    ? [keepsTrying]
    : [movesPastLimit(caps.deliveryLimit), diesWhileStopped(caps.deliveryLimit)]),
];
