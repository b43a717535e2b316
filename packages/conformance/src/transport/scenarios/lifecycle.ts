import type { TopologySetup } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup } from '../scenario.js';

/** Eager set-up where offered, draining on close, and restarts that lose nothing. */
export const lifecycleScenarios: ScenarioGroup = () => [
  {
    name: 'start(), where the transport offers it (TopologySetup), is idempotent and concurrent-safe, and leaves publish and consume working',
    proves: [],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const setup = fx.transport as Partial<TopologySetup>;
      if (typeof setup.start === 'function') {
        const starting = [setup.start(), setup.start()];
        for (const s of starting) expect(s, 'start() returns a promise').toBeInstanceOf(Promise);
        await Promise.all(starting);
        await setup.start();
      }
      const event = testEnvelope();
      const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
      await fx.consume(spy.handler(), { concurrency: 1 });
      await fx.publish(event);
      await spy.waitFor(event.id, 'processed');
    },
  },
  {
    name: 'subscription close() waits for in-flight handlers and their settlements, and loses nothing',
    proves: ['durability'],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const events = Array.from({ length: 6 }, () => testEnvelope());
      const release = fx.gate();
      const spy = createHandlerSpy(
        async (d, { consumer }) => {
          if (consumer === 'first') await release.opened;
          await d.ack();
        },
        { timeoutMs: t.deliveryMs },
      );
      const sub = await fx.consume(spy.handler('first'), { concurrency: 3 });
      await fx.publish(...events);
      await spy.waitForCount('received', 3);
      let ackedWhenClosed = -1;
      const closing = sub.close().then(() => {
        ackedWhenClosed = spy.count('processed');
      });
      await sleep(t.quietMs);
      expect(ackedWhenClosed, 'close() resolved while handlers were still running').toBe(-1);
      release.open();
      await closing;
      expect(ackedWhenClosed, 'settlements recorded before close() resolved').toBe(
        spy.count('received'),
      );
      await sub.close(); // idempotent
      const receivedByFirst = spy.count('received');
      await sleep(t.quietMs);
      expect(spy.count('received'), 'no delivery after close() resolved').toBe(receivedByFirst);

      await fx.consume(spy.handler('second'), { concurrency: 3 });
      for (const e of events) await spy.waitFor(e.id, 'processed');
      for (const e of events) expect(spy.count('processed', e.id), `acks of ${e.id}`).toBe(1);
    },
  },
  {
    name: 'Transport.close() drains its subscriptions and is idempotent',
    proves: ['durability'],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const event = testEnvelope();
      const transport = await fx.open();
      const release = fx.gate();
      const spy = createHandlerSpy(
        async (d) => {
          await release.opened;
          await d.ack();
        },
        { timeoutMs: t.deliveryMs },
      );
      await fx.consume(spy.handler(), { concurrency: 1 }, transport);
      await fx.publish(event);
      await spy.waitFor(event.id, 'received');
      let closed = false;
      const closing = transport.close().then(() => {
        closed = true;
      });
      await sleep(t.quietMs);
      expect(closed, 'close() resolved while a handler was running').toBe(false);
      release.open();
      await closing;
      expect(spy.count('processed', event.id)).toBe(1);
      await transport.close();
    },
  },
  {
    name: 'a consumer restart on a new transport instance loses nothing, an interrupted message included',
    proves: ['durability'],
    async run({ fixture, t }) {
      await using fx = await fixture();
      const events = Array.from({ length: 10 }, () => testEnvelope());
      const interrupted = events[3];
      const shutdown = fx.gate();
      const spy = createHandlerSpy(
        async (d, { consumer }) => {
          if (consumer === 'before' && d.envelope.id === interrupted?.id) {
            await shutdown.opened;
            return; // the process is stopping: leave it unsettled
          }
          await d.ack();
        },
        { timeoutMs: t.deliveryMs },
      );
      const before = await fx.open();
      const sub = await fx.consume(spy.handler('before'), { concurrency: 2 }, before);
      await fx.publish(...events);
      await spy.waitFor(interrupted?.id ?? '', 'received');
      const closing = sub.close();
      shutdown.open();
      await closing;
      await before.close();

      const after = await fx.open();
      await fx.consume(spy.handler('after'), { concurrency: 2 }, after);
      for (const e of events) await spy.waitFor(e.id, 'processed');
      const resumed = await spy.waitFor(interrupted?.id ?? '', 'processed');
      expect(resumed.consumer).toBe('after');
      expect(resumed.attempt).toBe(2);
    },
  },
];
