import { handleOnce, sleep, testEnvelope, waitUntil } from '@onceflow/conformance';
import { createMemoryStore } from '@onceflow/core/testing';
import { type Envelope, toOnceflowError } from '@onceflow/core';
import { type RabbitMqServer, startRabbitMqServer } from '@onceflow/test-servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRabbitMqTransport } from '../src/index.js';

// A RabbitMQ node of our own (port 5677), restarted mid-stream; the shared broker is not touched.
let broker: RabbitMqServer;
beforeAll(async () => {
  broker = await startRabbitMqServer({ port: 5677 });
}, 120_000);
afterAll(() => broker?.[Symbol.asyncDispose](), 60_000);

describe('rabbitmq transport across a broker restart', () => {
  it('fails publishes clearly while the broker is down, recovers, and processes every accepted event once', async () => {
    const opts = { url: broker.url, queue: `onceflow-restart-${Date.now()}`, reconnectMaxMs: 400 };
    const producer = createRabbitMqTransport(opts);
    const consumer = createRabbitMqTransport(opts);
    await producer.start();
    const effects = new Map<string, number>();
    const handler = handleOnce(createMemoryStore(), async (d) => {
      await sleep(2); // deliveries are in flight when the broker goes away
      effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
    });
    const sub = await consumer.consume(handler, { concurrency: 8 });

    const accepted: Envelope[] = [];
    const refusals: string[] = [];
    let stopped = false;
    const stream = (async () => {
      while (!stopped) {
        const batch = Array.from({ length: 5 }, () => testEnvelope());
        try {
          await producer.publish(batch.map((envelope) => ({ envelope })));
          accepted.push(...batch);
        } catch (err) {
          refusals.push(toOnceflowError(err).code); // the receiver would answer 503
        }
        await sleep(10);
      }
    })();

    const processedCount = () => effects.size;
    await waitUntil(() => processedCount() >= 100, {
      timeoutMs: 20_000,
      message: '100 processed before the restart',
    });
    await broker.stopApp();
    await waitUntil(() => refusals.length > 0, {
      timeoutMs: 10_000,
      message: 'a publish refused during the outage',
    });
    await broker.startApp();
    const acceptedBefore = accepted.length;
    await waitUntil(() => accepted.length >= acceptedBefore + 100, {
      timeoutMs: 30_000,
      message: '100 more accepted after the restart',
    });
    stopped = true;
    await stream;

    await waitUntil(() => accepted.every((e) => effects.has(e.id)), {
      timeoutMs: 30_000,
      message: () =>
        `${accepted.filter((e) => !effects.has(e.id)).length} accepted events not processed`,
    });
    await sub.close();
    await Promise.all([producer.close(), consumer.close()]);
    expect(new Set(refusals)).toEqual(new Set(['TRANSPORT_UNAVAILABLE']));
    expect(
      [...effects.values()].filter((n) => n !== 1),
      'effects run more than once',
    ).toEqual([]);
  }, 120_000);
});
