import type { Delivery } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { dedupeKeyOf } from '@onceflow/core/kit';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { handleOnce } from '../../handle-once.js';
import { createHandlerSpy } from '../../spy.js';
import { beforeLeaseEnds, sleep, waitUntil } from '../../wait.js';
import type { ScenarioContext, ScenarioGroup, TransportScenario } from '../scenario.js';

/** A spy whose acks go through the event record's guard (handleOnce), counting how often each effect ran. */
function guardedSpy(ctx: ScenarioContext) {
  const effects = new Map<string, number>();
  const guard = handleOnce(
    createMemoryStore(),
    async (d: Delivery) => {
      effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
    },
    { maxBusyDelayMs: Math.min(50, ctx.caps.maxDelayMs) },
  );
  const spy = createHandlerSpy(guard, { timeoutMs: ctx.t.deliveryMs });
  return { spy, effects };
}

const declared: TransportScenario = {
  name: 'drops a re-publish with the same dedupe key within the declared window, and delivers a distinct key',
  proves: ['brokerDedupe'],
  async run({ fixture, caps, t }) {
    const window = caps.brokerDedupe === false ? undefined : caps.brokerDedupe.windowMs;
    expect(
      typeof window === 'number' && window > 0,
      `the declared window is a number of ms above 0, got ${window}`,
    ).toBe(true);
    await using fx = await fixture();
    const sentinel = testEnvelope();
    const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
    await fx.consume(spy.handler(), { concurrency: 2 });
    // Inside the window only if taken within it: a run that a stall made longer is run again.
    const event = await beforeLeaseEnds(
      window ?? 0,
      async () => {
        const event = testEnvelope();
        await fx.publish(event);
        await fx.publish(event); // the receiver's relay re-publishing after a crash
        await fx.publish(
          { envelope: event },
          { envelope: event, dedupeKey: dedupeKeyOf({ envelope: event }) },
        );
        await fx.publish({ envelope: event, dedupeKey: `${event.id}:replay-1` }); // a replay: distinct key
        return event;
      },
      'the transport’s dedupe window',
    );
    await fx.publish(sentinel);
    await spy.waitFor(sentinel.id, 'processed');
    await spy.waitForCount('processed', 2, { id: event.id });
    await sleep(t.quietMs);
    expect(spy.count('received', event.id), 'one delivery per distinct dedupe key').toBe(2);
  },
};

/**
 * A window short enough to wait out: a re-publish inside it is dropped, one after it delivered
 * again. The window starts when the broker takes the first publish, within `publish()`'s call.
 */
const expires = (windowMs: number): TransportScenario => ({
  name: 'remembers a dedupe key for the declared window (ms) and delivers a re-publish once the window has passed',
  proves: ['brokerDedupe'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
    await fx.consume(spy.handler(), { concurrency: 1 });
    // Inside the window only if taken within it: a run that a stall made longer is run again.
    const { event, taken } = await beforeLeaseEnds(
      windowMs,
      async () => {
        const event = testEnvelope();
        const asked = Date.now();
        await fx.publish(event);
        const taken = Date.now();
        await spy.waitFor(event.id, 'processed');
        await sleep(Math.max(0, asked + windowMs * 0.3 - Date.now()));
        await fx.publish(event); // inside the window (it began at `asked` or later)
        return { event, taken };
      },
      'the transport’s dedupe window',
    );
    await sleep(Math.max(0, taken + windowMs + 20 - Date.now()));
    await fx.publish(event); // past the window (it began at `taken` or earlier)
    await spy.waitForCount('processed', 2, { id: event.id });
    await sleep(t.quietMs);
    expect(
      spy.count('received', event.id),
      'deliveries: the first, and the one past the window',
    ).toBe(2);
  },
});

const fallback: TransportScenario = {
  name: 'without broker dedupe, a re-publish may arrive twice and the event record’s guard keeps its effect once',
  proves: ['brokerDedupe'],
  async run(ctx) {
    await using fx = await ctx.fixture();
    const event = testEnvelope();
    const sentinel = testEnvelope();
    const { spy, effects } = guardedSpy(ctx);
    await fx.consume(spy.handler(), { concurrency: 2 });
    await fx.publish(event);
    await fx.publish(event);
    await fx.publish(sentinel);
    await spy.waitFor(sentinel.id, 'processed');
    await spy.waitFor(event.id, 'processed');
    await sleep(ctx.t.quietMs);
    // Every delivery settled: acked, or retried by the guard while the other copy held the lease
    // (that retry is delivered again, and counted again when received).
    const settled = () => spy.count('processed', event.id) + spy.count('retried', event.id);
    await waitUntil(() => spy.count('received', event.id) === settled(), {
      timeoutMs: ctx.t.deliveryMs,
      message: 'every delivery of the duplicated event to be settled',
    });
    expect(spy.count('processed', event.id)).toBeGreaterThanOrEqual(1);
    expect(spy.count('processed', event.id)).toBeLessThanOrEqual(2);
    expect(effects.get(event.id), 'effect of the duplicated event').toBe(1);
  },
};

const guardAlways: TransportScenario = {
  name: 'the event record’s guard keeps the effect once when one event is delivered twice',
  proves: [],
  async run(ctx) {
    await using fx = await ctx.fixture();
    const event = testEnvelope();
    const { spy, effects } = guardedSpy(ctx);
    await fx.consume(spy.handler(), { concurrency: 2 });
    await fx.publish(
      { envelope: event, dedupeKey: `${event.id}:a` },
      { envelope: event, dedupeKey: `${event.id}:b` },
    );
    await spy.waitForCount('processed', 2, { id: event.id });
    expect(effects.get(event.id)).toBe(1);
  },
};

/**
 * Broker dedupe when declared (and its expiry, for a window short enough to wait out), the guard
 * fallback when not, and the guard in any case.
 */
export const dedupeScenarios: ScenarioGroup = (caps, t) => [
  caps.brokerDedupe === false ? fallback : declared,
  // Only a window the suite can wait out (a transport configured with a short one).
  ...(caps.brokerDedupe !== false && caps.brokerDedupe.windowMs <= t.deliveryMs
    ? [expires(caps.brokerDedupe.windowMs)]
    : []),
  guardAlways,
];
