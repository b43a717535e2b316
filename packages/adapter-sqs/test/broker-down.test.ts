import { SQSClient } from '@aws-sdk/client-sqs';
import { expectAnswersWhileBrokerDown, startTcpProxy } from '@onceflow/conformance';
import { DEFAULT_PUBLISH_TIMEOUT_MS } from '@onceflow/core/kit';
import { describe, it } from 'vitest';
import { assertSqsAnswers, endpoint, testClient, testTransport, uniqueQueue } from './sqs.js';

// The shared ElasticMQ is never stopped: the transport reaches it through a TCP proxy of this
// test's own, which hangs or refuses its connections.
const publishTimeoutMs = DEFAULT_PUBLISH_TIMEOUT_MS; // the default is what is tested

async function viaProxy() {
  await assertSqsAnswers(testClient());
  const proxy = await startTcpProxy({ targetPort: Number(new URL(endpoint).port) });
  const client = new SQSClient({
    endpoint: proxy.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
  });
  const transport = testTransport(client, { queue: uniqueQueue('down') });
  await transport.start();
  return { proxy, client, transport };
}

describe('sqs with the endpoint unreachable', () => {
  it('hung (connections open, nothing answered): every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it answers again', async () => {
    const { proxy, client, transport } = await viaProxy();
    await using _proxy = proxy;
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'sqs hung',
      down: () => proxy.hang(),
      up: () => proxy.restore(),
    });
    client.destroy();
  }, 120_000);

  it('refused (nothing listens): every concurrent delivery gets 503 with Retry-After inside the publish deadline, at once while known down, and 202 once it is back', async () => {
    const { proxy, client, transport } = await viaProxy();
    await using _proxy = proxy;
    await expectAnswersWhileBrokerDown({
      transport,
      publishTimeoutMs,
      label: 'sqs refused',
      down: () => proxy.refuse(),
      up: () => proxy.restore(),
    });
    client.destroy();
  }, 120_000);
});
