import { randomBytes } from 'node:crypto';
import { expectAnswersWhileBrokerDown, workerWaitsForBroker } from '@onceflow/conformance';
import { type KafkaServer, startKafkaServer } from '@onceflow/test-servers';
import { DEFAULT_PUBLISH_TIMEOUT_MS } from '@onceflow/core/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaTransport } from '../src/index.js';
import { testOptions } from './brokers.js';

// A broker of this test's own (9292/9293, own data dir): the shared one on 9092 is never stopped.
let server: KafkaServer;
beforeAll(async () => {
  server = await startKafkaServer({ port: 9292 });
}, 180_000);
afterAll(() => server?.[Symbol.asyncDispose]());

// The default publishTimeoutMs is what is tested.
const publishTimeoutMs = DEFAULT_PUBLISH_TIMEOUT_MS;
const transportOf = (name: string) =>
  createKafkaTransport({
    ...testOptions(`onceflow-${name}-${randomBytes(3).toString('hex')}`),
    brokers: [...server.brokers],
  });

// Before the publish deadline, a receiver over a stopped broker took 15-42 s to answer 503.
describe('kafka with the broker down', () => {
  it('hung (SIGSTOP: connections open, nothing answered): every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it answers again', async () => {
    const transport = transportOf('hung');
    await transport.start();
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'kafka hung',
      down: () => server.pause(),
      up: () => server.resume(),
    });
  }, 180_000);

  it('stopped (SIGKILL): every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it is back', async () => {
    const transport = transportOf('stopped');
    await transport.start();
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'kafka stopped',
      down: () => server.stop({ kill: true }),
      up: () => server.start(),
    });
  }, 300_000);

  it('a worker started while the broker is down waits, warning once, and handles what is published once it is back', async () => {
    const transport = transportOf('late');
    await server.stop({ kill: true });
    const seen = await workerWaitsForBroker({ transport, startBroker: () => server.start() });
    console.info(
      `kafka: a worker started while down handled its first event ${seen.handledAfterMs} ms after the broker started`,
    );
    expect(seen).toMatchObject({ waitedForBroker: true, warnings: 1 });
    await transport.close();
  }, 300_000);
});
