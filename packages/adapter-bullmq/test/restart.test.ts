import {
  type HandlerSpy,
  createHandlerSpy,
  handleOnce,
  testEnvelope,
  waitUntil,
} from '@onceflow/conformance';
import { type Envelope, toOnceflowError } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '@onceflow/test-servers';
import { createBullmqTransport } from '../src/index.js';

const PORT = 6391;

describe('bullmq transport and a Redis restart', () => {
  it('survives Redis being killed and restarted: refuses publishes while it is down, keeps what AOF stored, and reconnects', async () => {
    await using redis = await startRedisServer({ port: PORT });
    const transport = createBullmqTransport({
      url: redis.url,
      queue: 'restart',
      lockMs: 5_000,
      stalledIntervalMs: 200,
    });
    try {
      const effects = new Map<string, number>();
      const delayed = new Set<string>();
      const guarded = handleOnce(createMemoryStore(), async (d) => {
        effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
      });
      const spy: HandlerSpy = createHandlerSpy(
        async (d) => {
          // These wait in BullMQ's delayed set across the crash.
          if (delayed.has(d.envelope.id) && d.attempt === 1) return d.retry({ delayMs: 3_000 });
          return guarded(d);
        },
        { timeoutMs: 20_000 },
      );
      await transport.consume(spy.handler(), { concurrency: 4 });

      const before = Array.from({ length: 10 }, () => testEnvelope());
      const waiting = Array.from({ length: 5 }, () => testEnvelope());
      for (const e of waiting) delayed.add(e.id);
      await transport.publish([...before, ...waiting].map((envelope) => ({ envelope })));
      for (const e of before) await spy.waitFor(e.id, 'processed');

      await redis.kill();
      const refused = await transport.publish([{ envelope: testEnvelope() }]).then(
        () => undefined,
        (err: unknown) => toOnceflowError(err).code,
      );
      expect(refused, 'publish while Redis is down').toBe('TRANSPORT_UNAVAILABLE');

      await redis.start();
      const after = Array.from({ length: 10 }, () => testEnvelope());
      await waitUntil(
        () =>
          transport.publish(after.map((envelope) => ({ envelope }))).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 15_000, intervalMs: 200, message: 'a publish to succeed after the restart' },
      );
      const all: Envelope[] = [...before, ...waiting, ...after];
      for (const e of all) await spy.waitFor(e.id, 'processed');
      for (const e of all) expect(effects.get(e.id), `effects of ${e.id}`).toBe(1);
      for (const e of waiting) {
        expect((await spy.waitFor(e.id, 'processed')).attempt, 'kept in the delayed set').toBe(2);
      }
    } finally {
      await transport.close();
    }
  }, 60_000);
});
