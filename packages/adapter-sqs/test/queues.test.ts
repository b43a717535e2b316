import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteSqsQueues, ensureSqsQueues } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport, uniqueQueue } from './sqs.js';

const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

const attributes = async (url: string) =>
  (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] })))
    .Attributes ?? {};

describe('queue set-up', () => {
  it('creates FIFO queues with content-based dedupe off and the DLQ wired (maxReceiveCount = deliveryLimit), idempotently, and repairs drift', async () => {
    const queue = uniqueQueue('setup');
    try {
      const first = await ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 5 });
      expect(first.name).toBe(`${queue}.fifo`);
      expect(first.deadLetterName).toBe(`${queue}-dlq.fifo`);
      const again = await ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 5 });
      expect(again).toEqual(first);
      const a = await attributes(first.url);
      expect(a.FifoQueue).toBe('true');
      expect(a.ContentBasedDeduplication).toBe('false');
      const dlqArn = (await attributes(first.deadLetterUrl)).QueueArn;
      expect(JSON.parse(a.RedrivePolicy ?? '{}')).toMatchObject({ deadLetterTargetArn: dlqArn });
      expect(String(JSON.parse(a.RedrivePolicy ?? '{}').maxReceiveCount)).toBe('5');

      // Drift: another deliveryLimit asked for is applied; a check-only set-up refuses it.
      await expect(
        ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 7, create: false }),
      ).rejects.toMatchObject({ code: 'CONFIG' });
      await ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 7 });
      const b = await attributes(first.url);
      expect(String(JSON.parse(b.RedrivePolicy ?? '{}').maxReceiveCount)).toBe('7');
      await ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 7, create: false });
    } finally {
      await deleteSqsQueues(client, { queue, fifo: true });
    }
  });

  it('a FIFO queue made elsewhere with content-based dedupe on is refused by a check-only set-up', async () => {
    const queue = uniqueQueue('cbd');
    try {
      await client.send(
        new CreateQueueCommand({
          QueueName: `${queue}.fifo`,
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
        }),
      );
      await expect(
        ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 5, create: false }),
      ).rejects.toMatchObject({ code: 'CONFIG' });
    } finally {
      await deleteSqsQueues(client, { queue, fifo: true });
    }
  });

  it('with createQueues false, refuses to start on a missing queue', async () => {
    const transport = testTransport(client, { queue: uniqueQueue('missing'), createQueues: false });
    await expect(transport.start()).rejects.toMatchObject({ code: 'CONFIG' });
    await transport.close();
  });
});
