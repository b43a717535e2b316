import {
  createWorker,
  defineHandler,
  type Envelope,
  NonRetryableError,
  StoreUnavailableError,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep, waitUntil } from '../../wait.js';
import type { ScenarioGroup } from '../scenario.js';

const TYPE = 'test.inbox-outcome';

/**
 * The worker's `inbox` option over this transport: the receiver's inbox is another store than the
 * worker's records, and hears of every finished event through the transport's deliveries.
 */
export const receiverInboxScenarios: ScenarioGroup = (caps, t) => [
  {
    name: "marks each event processed in the receiver's inbox beside the records before acking it, dead letters included, and retries one whose mark failed",
    proves: [],
    async run({ fixture }) {
      await using fx = await fixture();
      const inbox = createMemoryStore();
      const records = createMemoryStore();
      const sent: Envelope[] = [0, 1, 2, 3].map((n) =>
        testEnvelope({ type: TYPE, payload: JSON.stringify({ n }) }),
      );
      // As a receiver does: claim, publish, mark enqueued.
      for (const envelope of sent) {
        const claim = await inbox.claim(envelope, { leaseMs: 60_000 });
        if (claim.status !== 'new') throw new Error(`claim of ${envelope.id}: ${claim.status}`);
        await fx.publish(envelope);
        await inbox.markEnqueued(envelope.source, envelope.id, claim.token);
      }
      const [refused, failsOnce] = sent;
      let failed = false;
      const told = {
        ...inbox,
        async markProcessed(source: string, id: string) {
          if (id === failsOnce?.id && !failed) {
            failed = true;
            throw new StoreUnavailableError('the inbox is down for one mark');
          }
          await inbox.markProcessed(source, id);
        },
      };
      const limit = caps.deliveryLimit === false ? 4 : caps.deliveryLimit;
      await using worker = createWorker({
        transport: fx.transport,
        records,
        inbox: told,
        retry: { maxAttempts: Math.max(1, Math.min(3, limit - 1)), baseDelayMs: 10 },
        handlers: [
          defineHandler({
            type: TYPE,
            async handle(_event, ctx) {
              if (ctx.envelope.id === refused?.id) throw new NonRetryableError('refused');
            },
          }),
        ],
      });
      await worker.start();

      const waitMs = t.deliveryMs * 2 + Math.min(5_000, caps.maxDelayMs);
      await waitUntil(
        async () => {
          const stats = await inbox.stats();
          return (stats.enqueued === 0 && stats.processed === sent.length) || undefined;
        },
        { timeoutMs: waitMs, message: 'every event marked processed in the inbox' },
      );
      expect(failed, 'one mark failed').toBe(true);
      expect((await inbox.stats()).oldestUnprocessedAt).toBe(undefined);
      expect(await records.count({ state: 'completed' })).toBe(sent.length - 1);
      expect(await records.count({ state: 'dead-lettered' })).toBe(1);
      await worker.close();

      // Every message was acked once its mark was made: nothing is left on the queue.
      const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs });
      await fx.consume(spy.handler(), { concurrency: 2 });
      await sleep(t.quietMs);
      expect(spy.count('received'), 'no message left unacked').toBe(0);
    },
  },
];
