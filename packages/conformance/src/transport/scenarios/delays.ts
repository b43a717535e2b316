import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

const longestDelay: TransportScenario = {
  name: 'retry accepts the longest declared delay (maxDelayMs) and refuses a longer one with RangeError, the message still held',
  proves: ['maxDelayMs'],
  async run({ fixture, caps, t }) {
    await using fx = await fixture();
    const event = testEnvelope();
    let outcomes: unknown[] = [];
    const spy = createHandlerSpy(
      async (d) => {
        const retry = (delayMs: number) =>
          d.retry({ delayMs }).then(
            () => 'accepted',
            (err: unknown) => err,
          );
        outcomes = [await retry(caps.maxDelayMs + 1), await retry(caps.maxDelayMs)];
      },
      { timeoutMs: t.deliveryMs },
    );
    await fx.consume(spy.handler(), { concurrency: 1 });
    await fx.publish(event);
    await spy.waitFor(event.id, 'returned');
    expect(outcomes[0], 'retry past maxDelayMs').toBeInstanceOf(RangeError);
    expect(outcomes[1], 'retry of maxDelayMs after the refused one').toBe('accepted');
    await sleep(t.quietMs);
    expect(spy.count('received', event.id), 'not delivered again before maxDelayMs').toBe(1);
  },
};

/**
 * A short retry asked after a long one is due first. Both are retried from their first delivery,
 * on distinct keys; the long one is asked first and is not due while the test watches.
 */
const shortAfterLong = (shortMs: number, longMs: number): TransportScenario => ({
  name: 'a short retry asked after a longer one is delivered when its own delay is up, not behind the longer one',
  proves: ['maxDelayMs'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const long = testEnvelope({ key: 'delay-long' });
    const short = testEnvelope({ key: 'delay-short' });
    const spy = createHandlerSpy(
      async (d) => {
        if (d.attempt > 1) return d.ack();
        return d.retry({ delayMs: d.envelope.id === long.id ? longMs : shortMs });
      },
      { timeoutMs: longMs + t.deliveryMs },
    );
    await fx.consume(spy.handler(), { concurrency: 2 });
    await fx.publish(long);
    const longRetried = await spy.waitFor(long.id, 'retried');
    await fx.publish(short);
    const retried = await spy.waitFor(short.id, 'retried');
    const again = await spy.waitFor(short.id, 'received', { attempt: 2 });
    expect(again.at - retried.at, 'ms from retry to redelivery').toBeGreaterThanOrEqual(shortMs);
    expect(
      again.at - longRetried.at,
      'ms from the longer retry to the shorter one’s redelivery: before the longer one is due',
    ).toBeLessThan(longMs);
  },
});

/**
 * As above, with the short one published first: it is retried at once (delay 0) until the long
 * one has been retried, then with its short delay. A transport that plans its next wake-up from
 * the message published last, rather than the one due first, delivers it too late.
 */
const shortPublishedFirst = (shortMs: number, longMs: number): TransportScenario => ({
  name: 'a short retry asked after a longer one is delivered when its own delay is up, the shorter one published first',
  proves: ['maxDelayMs'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const short = testEnvelope({ key: 'delay-short' });
    const long = testEnvelope({ key: 'delay-long' });
    let shortRetriedAt = 0;
    const spy = createHandlerSpy(
      async (d) => {
        if (d.envelope.id === long.id)
          return d.attempt > 1 ? d.ack() : d.retry({ delayMs: longMs });
        if (shortRetriedAt > 0) return d.ack();
        if (spy.count('retried', long.id) === 0) return d.retry({ delayMs: 0 });
        shortRetriedAt = Date.now();
        return d.retry({ delayMs: shortMs });
      },
      { timeoutMs: longMs + t.deliveryMs },
    );
    await fx.consume(spy.handler(), { concurrency: 2 });
    await fx.publish(short, long);
    const longRetried = await spy.waitFor(long.id, 'retried');
    const again = await spy.waitFor(short.id, 'processed');
    expect(
      again.at - shortRetriedAt,
      'ms from the short retry to its redelivery',
    ).toBeGreaterThanOrEqual(shortMs);
    expect(
      again.at - longRetried.at,
      'ms from the longer retry to the shorter one’s redelivery: before the longer one is due',
    ).toBeLessThan(longMs);
  },
});

/** The longest delay a transport declares, and delays of different lengths in flight at once. */
export const delayScenarios: ScenarioGroup = (caps, t) => {
  const shortMs = Math.min(t.retryDelayMs, caps.maxDelayMs);
  const longMs = Math.min(caps.maxDelayMs, shortMs + 3 * t.deliveryMs);
  return [
    longestDelay,
    ...(longMs >= 2 * shortMs
      ? [shortAfterLong(shortMs, longMs), shortPublishedFirst(shortMs, longMs)]
      : []),
  ];
};
