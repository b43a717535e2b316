import { expectAnswersWhileBrokerDown, workerWaitsForBroker } from '@onceflow/conformance';
import { type RedisServer, startRedisServer } from '@onceflow/test-servers';
import { DEFAULT_PUBLISH_TIMEOUT_MS } from '@onceflow/core/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqTransport } from '../src/index.js';

// A Redis of this test's own (port 6411); the shared one on 6379 is never stopped.
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer({ port: 6411 });
}, 60_000);
afterAll(() => redis?.[Symbol.asyncDispose]());

// The default publishTimeoutMs is what is tested.
const publishTimeoutMs = DEFAULT_PUBLISH_TIMEOUT_MS;
const transportOf = (name: string) =>
  createBullmqTransport({
    url: redis.url,
    queue: `onceflow-${name}-${Date.now()}`,
  });

describe('bullmq with Redis down', () => {
  it('hung (SIGSTOP: connections open, nothing answered): every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it answers again', async () => {
    const transport = transportOf('hung');
    await transport.start();
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'bullmq, Redis hung',
      down: () => redis.pause(),
      up: () => redis.resume(),
    });
  }, 120_000);

  it('killed: every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it is back', async () => {
    const transport = transportOf('killed');
    await transport.start();
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'bullmq, Redis killed',
      down: () => redis.kill(),
      up: () => redis.start(),
    });
  }, 120_000);

  it('a worker started while Redis is down waits and handles what is published once Redis is back', async () => {
    const transport = transportOf('late');
    await redis.kill();
    const seen = await workerWaitsForBroker({ transport, startBroker: () => redis.start() });
    console.info(
      `bullmq: a worker started while Redis was down handled its first event ${seen.handledAfterMs} ms after Redis started (${seen.warnings} warnings)`,
    );
    // The first connect waits inside ioredis (which logs the outage once on the transport's
    // logger), so start() waits without failing and the worker has nothing to log.
    expect(seen).toMatchObject({ waitedForBroker: true, warnings: 0 });
    await transport.close();
  }, 120_000);
});
