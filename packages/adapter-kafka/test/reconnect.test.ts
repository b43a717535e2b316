import { randomBytes } from 'node:crypto';
import { handleOnce, testEnvelope, waitUntil } from '@onceflow/conformance';
import { type Delivery, TransportUnavailableError } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { type KafkaServer, startKafkaServer } from '@onceflow/test-servers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKafkaTransport } from '../src/index.js';
import { testOptions } from './brokers.js';

// A broker of this test's own (9192/9193, own data dir): the shared one on 9092 is never stopped.
let server: KafkaServer;
beforeAll(async () => {
  server = await startKafkaServer({ port: 9192 });
}, 180_000);
afterAll(() => server?.[Symbol.asyncDispose]());

const topic = `onceflow-restart-${randomBytes(3).toString('hex')}`;

it('after a broker crash, publishes fail with TransportUnavailableError until it is back, then every accepted event is handled once by the same subscription', async () => {
  const transport = createKafkaTransport({ ...testOptions(topic), brokers: [...server.brokers] });
  await transport.start();
  const effects = new Map<string, number>();
  const guard = handleOnce(createMemoryStore(), async (d: Delivery) => {
    effects.set(d.envelope.id, (effects.get(d.envelope.id) ?? 0) + 1);
  });
  const sub = await transport.consume(guard, { concurrency: 8 });
  const accepted: string[] = [];
  const publish = async (n: number, prefix: string) => {
    const events = Array.from({ length: n }, (_, i) => testEnvelope({ key: `${prefix}-${i % 5}` }));
    await transport.publish(events.map((envelope) => ({ envelope })));
    accepted.push(...events.map((e) => e.id));
  };
  const allHandled = () => accepted.every((id) => effects.get(id) === 1);

  await publish(30, 'before');
  await waitUntil(() => effects.size > 0, { timeoutMs: 30_000, message: 'first records handled' });
  await publish(30, 'mid'); // some of these are still unhandled when the broker dies
  await server.stop({ kill: true });

  const t0 = Date.now();
  const outage = await publish(5, 'outage').then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outage, 'publish during the outage').toBeInstanceOf(TransportUnavailableError);
  expect(Date.now() - t0, 'failed within the publish timeout, not hung').toBeLessThan(40_000);

  await server.start();
  // Known down: publishes fail fast until a probe finds the broker back and the producer reconnects.
  const after = Array.from({ length: 30 }, (_, i) => testEnvelope({ key: `after-${i % 5}` }));
  await waitUntil(
    () =>
      transport.publish(after.map((envelope) => ({ envelope }))).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000, message: 'a publish accepted after the restart' },
  );
  accepted.push(...after.map((e) => e.id));
  await waitUntil(allHandled, {
    timeoutMs: 90_000,
    message: 'every accepted event handled after the restart',
  });
  for (const id of accepted) expect(effects.get(id), `effect of ${id}`).toBe(1);
  expect(effects.size, 'only accepted events were handled').toBe(accepted.length);
  await sub.close();
  await transport.close();
}, 300_000);
