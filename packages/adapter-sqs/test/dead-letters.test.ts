import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createHandlerSpy, sameBytes, testEnvelope, waitUntil } from '@onceflow/conformance';
import { createWorker, defineHandler } from '@onceflow/core';
import { DECODE_ERROR_HEADER, UNDECODABLE } from '@onceflow/core/kit';
import { createMemoryStore } from '@onceflow/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteSqsQueues } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport, uniqueQueue } from './sqs.js';

// The broker's own dead-letter queue (the redrive policy's maxReceiveCount = deliveryLimit), read
// back with consumeDeadLetters, and what the worker makes of it and of undecodable bodies.
const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

/** Messages SQS holds in a queue, visible or not (ElasticMQ's counts are exact). */
const depth = async (url: string) => {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const a = out.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible);
};

/** A started transport on a fresh queue, deleted on dispose. */
async function fixture(options: { fifo: boolean; deliveryLimit: number; lockMs: number }) {
  const queue = uniqueQueue('dlq');
  const transport = testTransport(client, { queue, ...options });
  await transport.start();
  const queues = transport.queues;
  if (!queues) throw new Error('no queues after start()');
  return {
    queue,
    transport,
    queues,
    async [Symbol.asyncDispose]() {
      await transport.close();
      await deleteSqsQueues(client, { queue, fifo: options.fifo });
    },
  };
}

/** A second started transport on `queue`, with the default (30 s) lock; closed on dispose. */
async function readerOf(queue: string, options: { fifo: boolean; deliveryLimit: number }) {
  const transport = testTransport(client, { queue, ...options });
  await transport.start();
  return { transport, [Symbol.asyncDispose]: () => transport.close() };
}

describe('the dead-letter queue', () => {
  for (const fifo of [true, false]) {
    it(`${fifo ? 'FIFO' : 'standard'}: a message never settled (a stuck or dying consumer) moves there after deliveryLimit receives; consumeDeadLetters reads it with attempt = deliveryLimit, retry keeps it there, ack removes it`, async () => {
      await using fx = await fixture({ fifo, deliveryLimit: 2, lockMs: 1000 });
      const event = testEnvelope({ key: 'k-1' });
      // Holds each delivery until its visibility runs out: nothing is settled, as in a crash.
      const stuck = createHandlerSpy(
        (d) => new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve())),
        { timeoutMs: 10_000 },
      );
      const sub = await fx.transport.consume(stuck.handler('work'), { concurrency: 1 });
      await fx.transport.publish([{ envelope: event }]);
      await stuck.waitFor(event.id, 'returned', { attempt: 2 });
      await waitUntil(async () => (await depth(fx.queues.deadLetterUrl)) === 1, {
        timeoutMs: 5000,
        message: 'SQS to move the message to the dead-letter queue',
      });
      await sub.close();
      expect(stuck.count('received', event.id), 'no delivery past deliveryLimit').toBe(2);

      // The dead-letter queue is read with a long lock: the short one is for the stuck deliveries
      // only, and a stall of the machine could run it out (the adapter refuses a settlement 0.9 s
      // after the receive) between a dead letter's receive and its retry or ack.
      await using reader = await readerOf(fx.queue, { fifo, deliveryLimit: 2 });
      const letters = createHandlerSpy(
        (d) => (d.attempt === 2 ? d.retry({ delayMs: 0 }) : d.ack()),
        {
          timeoutMs: 10_000,
        },
      );
      const dlq = await reader.transport.consumeDeadLetters(letters.handler('dlq'), {
        concurrency: 1,
      });
      const first = await letters.waitFor(event.id, 'retried', { attempt: 2 });
      const again = await letters.waitFor(event.id, 'processed', { attempt: 3 });
      expect('renewLock' in again.delivery, 'a dead letter’s lock is renewable too').toBe(true);
      for (const got of [first, again].map((e) => e.delivery.envelope)) {
        expect({ ...got, payload: undefined }).toEqual({ ...event, payload: undefined });
        expect(sameBytes(got.payload, event.payload)).toBe(true);
      }
      await dlq.close();
      expect(await depth(fx.queues.deadLetterUrl)).toBe(0);
      expect(await depth(fx.queues.url)).toBe(0);
    });
  }

  it('a body that is not an envelope reaches the handler as an onceflow.undecodable envelope with its bytes', async () => {
    await using fx = await fixture({ fifo: false, deliveryLimit: 20, lockMs: 5000 });
    await client.send(new SendMessageCommand({ QueueUrl: fx.queues.url, MessageBody: 'not json' }));
    const spy = createHandlerSpy();
    await fx.transport.consume(spy.handler(), { concurrency: 1 });
    await spy.waitForCount('processed', 1);
    const envelope = spy.of('processed')[0]?.delivery.envelope;
    expect(envelope).toMatchObject(UNDECODABLE);
    expect(Buffer.from(envelope?.payload ?? []).toString()).toBe('not json');
    expect(envelope?.headers[DECODE_ERROR_HEADER]).toBeTruthy();
    await waitUntil(async () => (await depth(fx.queues.url)) === 0, {
      timeoutMs: 3000,
      message: 'the ack to delete it',
    });
  });

  it('the worker records what SQS dead-lettered and what it cannot decode as dead letters, and acks both', async () => {
    await using fx = await fixture({ fifo: true, deliveryLimit: 3, lockMs: 5000 });
    const event = testEnvelope();
    // An earlier consumer that failed it every time, past the redrive policy's count.
    const failing = createHandlerSpy((d) => d.retry({ delayMs: 0 }), { timeoutMs: 10_000 });
    const sub = await fx.transport.consume(failing.handler(), { concurrency: 1 });
    await fx.transport.publish([{ envelope: event }]);
    await failing.waitFor(event.id, 'retried', { attempt: 3 });
    await waitUntil(async () => (await depth(fx.queues.deadLetterUrl)) === 1, {
      timeoutMs: 5000,
      message: 'SQS to move the message to the dead-letter queue',
    });
    await sub.close();
    await client.send(
      new SendMessageCommand({
        QueueUrl: fx.queues.url,
        MessageBody: '{"v":1,"truncated',
        MessageGroupId: 'raw',
        MessageDeduplicationId: 'raw-1',
      }),
    );

    const records = createMemoryStore();
    const handled: string[] = [];
    const worker = createWorker({
      transport: fx.transport,
      records,
      retry: { maxAttempts: 2 },
      handlers: [
        defineHandler({
          type: event.type,
          handle: async (_e, ctx) => void handled.push(ctx.envelope.id),
        }),
      ],
    });
    await worker.start();
    try {
      const letters = await waitUntil(
        async () => {
          const page = await records.list({ state: 'dead-lettered', limit: 10 });
          return page.records.length === 2 ? page.records : undefined;
        },
        { timeoutMs: 10_000, message: 'both dead letters in the record' },
      );
      const bySource = new Map(letters.map((r) => [r.source, r]));
      expect(bySource.get(event.source)).toMatchObject({ id: event.id, attempts: 3 });
      expect(bySource.get(event.source)?.history.at(-1)?.note).toBe('broker dead-letter');
      expect(bySource.get(UNDECODABLE.source)?.reason).toMatch(/^undecodable: /);
      const kept = await records.get(event.source, event.id);
      expect(kept?.envelope?.id).toBe(event.id);
      await waitUntil(
        async () => (await depth(fx.queues.url)) + (await depth(fx.queues.deadLetterUrl)) === 0,
        { timeoutMs: 5000, message: 'both acked' },
      );
      expect(handled).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});
