import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { createMemoryStore } from '@onceflow/core/testing';
import { createWorker, defineHandler } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '../src/index.js';
import { useTestConnection } from './crashing-consumer.js';

// The worker on the real broker: every dead letter ends in the event record, and nothing is left
// on the broker once it is recorded.
const { conn, crashOnce } = useTestConnection();

async function depths(queue: string): Promise<[number, number]> {
  const ch = await conn().createChannel();
  try {
    const work = await ch.checkQueue(queue);
    const dlq = await ch.checkQueue(`${queue}.dlq`);
    return [work.messageCount, dlq.messageCount];
  } finally {
    await ch.close();
  }
}

describe('a worker on rabbitmq', () => {
  it('records a handler that keeps failing as a dead letter and leaves nothing on the broker', async () => {
    const queue = `onceflow-worker-fail-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, lockMs: 5_000 });
    const records = createMemoryStore();
    const event = testEnvelope();
    let runs = 0;
    const worker = createWorker({
      transport,
      records,
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 },
      handlers: [
        defineHandler({
          type: event.type,
          async handle() {
            runs++;
            throw new Error('always');
          },
        }),
      ],
    });
    await worker.start();
    await transport.publish([{ envelope: event }]);
    await waitUntil(
      async () => (await records.get(event.source, event.id))?.state === 'dead-lettered',
      {
        timeoutMs: 10_000,
        message: 'dead-lettered in the record',
      },
    );
    expect(runs).toBe(3);
    await worker.close();
    await waitUntil(async () => (await depths(queue)).join() === '0,0', {
      timeoutMs: 5_000,
      message: 'work queue and dead-letter queue empty',
    });
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });

  it('records a message whose consumers crashed deliveryLimit times, from the broker’s dead-letter queue', async () => {
    const queue = `onceflow-worker-crash-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, lockMs: 5_000, deliveryLimit: 3 });
    const records = createMemoryStore();
    const event = testEnvelope();
    await transport.publish([{ envelope: event }]);
    for (let i = 0; i < 3; i++) await crashOnce(queue);
    let runs = 0;
    const worker = createWorker({
      transport,
      records,
      retry: { maxAttempts: 2 },
      handlers: [
        defineHandler({
          type: event.type,
          async handle() {
            runs++;
          },
        }),
      ],
    });
    await worker.start();
    await waitUntil(
      async () => (await records.get(event.source, event.id))?.state === 'dead-lettered',
      {
        timeoutMs: 10_000,
        message: 'dead-lettered in the record',
      },
    );
    const record = await records.get(event.source, event.id);
    expect(record?.attempts).toBe(3);
    expect(record?.history.at(-1)?.note).toBe('broker dead-letter');
    expect(runs, 'the handler never ran past the limit').toBe(0);
    await worker.close();
    await waitUntil(async () => (await depths(queue)).join() === '0,0', {
      timeoutMs: 5_000,
      message: 'work queue and dead-letter queue empty',
    });
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });
});
