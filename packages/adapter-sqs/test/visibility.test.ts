import {
  createHandlerSpy,
  handleOnce,
  sleep,
  testEnvelope,
  waitUntil,
} from '@onceflow/conformance';
import { createMemoryStore } from '@onceflow/core/testing';
import type { Delivery, RenewableDelivery } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteSqsQueues } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport, uniqueQueue } from './sqs.js';

const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

const LOCK_MS = 1000;
const HANDLER_MS = 2500;

/** A started FIFO transport on a fresh queue, deleted on dispose. */
async function fixture() {
  const queue = uniqueQueue('vis');
  const transport = testTransport(client, { queue, lockMs: LOCK_MS });
  await transport.start();
  return {
    transport,
    async [Symbol.asyncDispose]() {
      await transport.close();
      await deleteSqsQueues(client, { queue, fifo: true });
    },
  };
}

/** A handler whose effect takes HANDLER_MS behind a record guard, counting effects per id. */
function slowGuardedHandler(during: (d: Delivery) => Promise<void>) {
  const effects = new Map<string, number>();
  const guard = handleOnce(
    createMemoryStore(),
    async (d) => {
      const until = Date.now() + HANDLER_MS;
      while (Date.now() < until) {
        await during(d);
        await sleep(LOCK_MS / 4);
      }
      effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
    },
    { leaseMs: 30_000, maxBusyDelayMs: 50 },
  );
  return { effects, spy: createHandlerSpy(guard, { timeoutMs: HANDLER_MS + 5 * LOCK_MS }) };
}

describe('visibility timeout', () => {
  it('redelivers a message whose handler outlives the visibility timeout, and the record guard keeps its effect once', async () => {
    await using fx = await fixture();
    const event = testEnvelope();
    const { spy, effects } = slowGuardedHandler(async () => {});
    await fx.transport.consume(spy.handler(), { concurrency: 4 });
    const publishedAt = Date.now();
    await fx.transport.publish([{ envelope: event }]);
    const first = await spy.waitFor(event.id, 'received', { attempt: 1 });
    const again = await spy.waitFor(event.id, 'received', { attempt: 2 });
    // From the publish, not the first handler call: that call may start well after SQS handed
    // the message out (and started its visibility) on a loaded machine.
    expect(again.at - publishedAt).toBeGreaterThanOrEqual(LOCK_MS);
    expect(again.at - first.at, 'redelivered while the first handler still ran').toBeLessThan(
      HANDLER_MS,
    );
    await spy.waitFor(event.id, 'processed');
    await waitUntil(() => first.delivery.signal.aborted, {
      timeoutMs: 1000,
      message: 'the first delivery’s signal to abort',
    });
    expect(effects.get(event.id), 'effects of the redelivered event').toBe(1);
    // The first delivery's late ack was refused (its visibility was lost); a later one acked.
    expect(spy.of('processed', event.id).every((e) => e.attempt > 1)).toBe(true);
  });

  it('renewLock (ChangeMessageVisibility) keeps the same long handler from being redelivered', async () => {
    // A run is judged only when each renewal, and the ack, came while the visibility it renewed
    // was surely held: a stall of the machine between two of them may rightly have let the
    // message become visible again. Such a run is run again, on a fresh queue.
    const surely = LOCK_MS * 0.75;
    for (let run = 1; ; run++) {
      await using fx = await fixture();
      const event = testEnvelope();
      let since = 0; // when the visibility was last set, at the earliest
      let inTime = true;
      const { spy, effects } = slowGuardedHandler(async (d) => {
        const at = Date.now();
        inTime &&= at - since < surely;
        await (d as RenewableDelivery).renewLock();
        since = at;
      });
      await fx.transport.consume(spy.handler(), { concurrency: 4 });
      since = Date.now();
      await fx.transport.publish([{ envelope: event }]);
      const done = await spy.waitFor(event.id, 'processed');
      inTime &&= done.at - since < surely; // the ack
      await sleep(LOCK_MS * 1.5);
      if (!inTime && run < 5) continue;
      expect(inTime, 'a run whose renewals and ack all came in time').toBe(true);
      expect(done.attempt).toBe(1);
      expect(spy.count('received', event.id)).toBe(1);
      expect(effects.get(event.id)).toBe(1);
      return;
    }
  });
});
