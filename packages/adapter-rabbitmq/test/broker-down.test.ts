import { expectAnswersWhileBrokerDown, workerWaitsForBroker } from '@onceflow/conformance';
import { type RabbitMqServer, startRabbitMqServer } from '@onceflow/test-servers';
import { DEFAULT_PUBLISH_TIMEOUT_MS } from '@onceflow/core/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRabbitMqTransport } from '../src/index.js';

// A RabbitMQ node of our own (port 5687), its application stopped and started; the shared broker
// on 5672 is not touched.
let broker: RabbitMqServer;
beforeAll(async () => {
  broker = await startRabbitMqServer({ port: 5687 });
}, 120_000);
afterAll(() => broker?.[Symbol.asyncDispose](), 60_000);

// The default publishTimeoutMs is what is tested.
const publishTimeoutMs = DEFAULT_PUBLISH_TIMEOUT_MS;

describe('rabbitmq with the broker down', () => {
  it('stopped: every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it is back', async () => {
    const transport = createRabbitMqTransport({
      url: broker.url,
      queue: `onceflow-down-${Date.now()}`,
      reconnectMaxMs: 1_000,
    });
    await transport.start();
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'rabbitmq stopped',
      down: () => broker.stopApp(),
      up: () => broker.startApp(),
    });
  }, 180_000);

  it('a worker started while the broker is down waits, warning once, and handles what is published once it is back', async () => {
    const transport = createRabbitMqTransport({
      url: broker.url,
      queue: `onceflow-late-${Date.now()}`,
      reconnectMaxMs: 1_000,
    });
    await broker.stopApp();
    const seen = await workerWaitsForBroker({ transport, startBroker: () => broker.startApp() });
    console.info(
      `rabbitmq: a worker started while down handled its first event ${seen.handledAfterMs} ms after the broker started`,
    );
    expect(seen).toMatchObject({ waitedForBroker: true, warnings: 1 });
    await transport.close();
  }, 180_000);
});
