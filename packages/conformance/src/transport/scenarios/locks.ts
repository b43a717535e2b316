import { type Delivery, type RenewableDelivery, toOnceflowError } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep, surelyHeldMs, untilJudged, waitUntil } from '../../wait.js';
import type { ScenarioContext, ScenarioGroup, TransportScenario } from '../scenario.js';

const messageScope: TransportScenario = {
  name: 'redelivers a hung handler’s message with attempt 2 after lockMs, aborts the first delivery’s signal and ignores its late settlement',
  proves: ['lock'],
  async run({ fixture, t }) {
    await using fx = await fixture({ lockMs: t.lockMs });
    const event = testEnvelope();
    const first = fx.gate();
    const second = fx.gate();
    let lateAck: unknown = 'not settled';
    const spy = createHandlerSpy(
      async (d) => {
        if (d.attempt === 1) {
          await first.opened;
          lateAck = await d.ack().then(
            () => 'resolved',
            (err: unknown) => toOnceflowError(err).code,
          );
          return;
        }
        if (d.attempt === 2) {
          await second.opened;
          return d.retry({ delayMs: 0 }); // must still find the message: the late ack removed nothing
        }
        return d.ack();
      },
      { timeoutMs: t.lockMs + t.deliveryMs },
    );
    await fx.consume(spy.handler(), { concurrency: 2 });
    const publishedAt = Date.now();
    await fx.publish(event);
    const held = await spy.waitFor(event.id, 'received', { attempt: 1 });
    const again = await spy.waitFor(event.id, 'received', { attempt: 2 });
    expect(
      again.at - publishedAt,
      'redelivered only after the lock expired',
    ).toBeGreaterThanOrEqual(t.lockMs);
    const stale: Delivery = held.delivery;
    await waitUntil(() => stale.signal.aborted, {
      timeoutMs: t.deliveryMs,
      message: 'the first delivery’s signal to be aborted once its lock is lost',
    });
    await expect(
      (stale as RenewableDelivery).renewLock(),
      'a message-scoped lock is renewable (RenewableDelivery), and a lost one refuses renewal',
    ).rejects.toMatchObject({ code: 'LOCK_LOST' });
    first.open();
    await spy.waitFor(event.id, 'returned', { attempt: 1 });
    second.open();
    await spy.waitFor(event.id, 'processed', { attempt: 3 });
    expect(['resolved', 'LOCK_LOST']).toContain(lateAck);
  },
};

const consumerScope: TransportScenario = {
  name: 'keeps a message with its consumer while it lives, and redelivers it to another consumer with attempt 2 when that consumer closes without settling',
  proves: ['lock'],
  async run({ fixture, t }) {
    await using fx = await fixture({ lockMs: t.lockMs });
    const event = testEnvelope();
    const hang = fx.gate();
    const spy = createHandlerSpy(
      async (d, { consumer }) => {
        if (consumer === 'first') return hang.opened; // returns without settling
        return d.ack();
      },
      { timeoutMs: t.deliveryMs },
    );
    const firstSub = await fx.consume(spy.handler('first'), { concurrency: 1 });
    await fx.publish(event);
    await spy.waitFor(event.id, 'received');
    const other = await fx.open();
    await fx.consume(spy.handler('second'), { concurrency: 1 }, other);
    await sleep(Math.max(t.quietMs, t.lockMs * 1.5));
    expect(spy.count('received', event.id), 'not redelivered while its consumer holds it').toBe(1);
    const closing = firstSub.close();
    hang.open();
    await closing;
    const again = await spy.waitFor(event.id, 'processed');
    expect(again.consumer).toBe('second');
    expect(again.attempt).toBe(2);
  },
};

/**
 * One run on a fresh queue: a handler renews its lock every lockMs / 4 for 2.5 × lockMs, then
 * acks (a redelivery acks at once). Resolves with what it saw, or `undefined` when a renewal or
 * the ack came back too late to prove the lock held: each renews it from its call (the first
 * lock runs from after the publish), and a stall of the machine between two calls (a GC pause,
 * a starved process, a broker's fsync) may rightly have let it go.
 */
async function renewedRun({ fixture, t }: ScenarioContext) {
  await using fx = await fixture({ lockMs: t.lockMs });
  const event = testEnvelope();
  let since = 0; // when the last call that surely held the lock was made
  let inTime = true;
  const holding = async (call: () => Promise<void>) => {
    const at = Date.now();
    try {
      await call();
    } finally {
      inTime &&= Date.now() - since < surelyHeldMs(t.lockMs);
      since = at;
    }
  };
  const spy = createHandlerSpy(
    async (d) => {
      expect('renewLock' in d, 'a message-scoped lock is renewable (RenewableDelivery)').toBe(true);
      if (d.attempt > 1) return d.ack();
      const until = Date.now() + t.lockMs * 2.5;
      while (Date.now() < until) {
        await holding(() => (d as RenewableDelivery).renewLock());
        await sleep(t.lockMs / 4);
      }
      await holding(() => d.ack());
    },
    { timeoutMs: t.lockMs * 3 + t.deliveryMs },
  );
  await fx.consume(spy.handler(), { concurrency: 2 });
  since = Date.now();
  await fx.publish(event);
  const done = await spy.waitFor(event.id, 'processed');
  const aborted = done.delivery.signal.aborted; // when it settled, as a handler would read it
  await sleep(Math.max(t.quietMs, t.lockMs));
  return inTime ? { done, aborted, received: spy.count('received', event.id) } : undefined;
}

const renewLock: TransportScenario = {
  name: 'renewLock keeps a long handler’s message from being redelivered',
  proves: ['lock'],
  async run(ctx) {
    const { done, aborted, received } = await untilJudged(
      () => renewedRun(ctx),
      'a renewal or the ack came back too late to prove the lock held: raise timeouts.lockMs',
    );
    expect(done.attempt).toBe(1);
    expect(aborted).toBe(false);
    expect(received).toBe(1);
  },
};

/** Lock loss by the declared scope; renewal of a message-scoped lock. */
export const lockScenarios: ScenarioGroup = (caps) =>
  caps.lock.scope === 'message' ? [messageScope, renewLock] : [consumerScope];
