import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { createHandlerSpy, testEnvelope } from '@onceflow/conformance';
import { afterAll, describe, expect, it } from 'vitest';
import { toOutgoing } from '../src/marshal.js';
import { sendAll } from '../src/publish.js';
import { deleteSqsQueues, ensureSqsQueues, SqsPublishError } from '../src/index.js';
import { assertSqsAnswers, testClient, testTransport, uniqueQueue } from './sqs.js';

const client = testClient();
await assertSqsAnswers(client);
afterAll(() => client.destroy());

const MAX = 1024 * 1024 - 8 * 1024;

/** Receives and deletes until `count` messages came, then checks one more long poll brings none. */
async function drain(url: string, count: number): Promise<Message[]> {
  const got: Message[] = [];
  for (let polls = 0; got.length < count && polls < 30; polls++) {
    const out = await client.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) continue;
    got.push(...messages);
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  const extra = await client.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
  expect(extra.Messages ?? []).toEqual([]);
  return got;
}

/** `n` outgoing messages of one key; the one at `bad` has a raw U+0001 in its body, which SQS refuses. */
function withRefusedEntry(n: number, bad: number) {
  return Array.from({ length: n }, (_, i) => {
    const m = toOutgoing({ envelope: testEnvelope({ key: 'k-1', payload: { i } }) }, MAX);
    return i === bad ? { ...m, body: `${m.body}\u0001` } : m;
  });
}

async function rejection(run: Promise<unknown>): Promise<SqsPublishError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SqsPublishError);
  expect(err).toMatchObject({ code: 'TRANSPORT_UNAVAILABLE' });
  return err as SqsPublishError;
}

describe('a batch entry SQS refuses', () => {
  it('standard queue: names the refused message, and every other one is stored once', async () => {
    const queue = uniqueQueue('partial-std');
    try {
      const { url } = await ensureSqsQueues(client, { queue, fifo: false, deliveryLimit: 5 });
      const messages = withRefusedEntry(12, 4); // two batches: 10 and 2
      const err = await rejection(sendAll({ client, url, fifo: false }, messages));
      expect(err.unsent).toEqual([
        { index: 4, code: 'InvalidAttributeValue', message: expect.any(String), senderFault: true },
      ]);
      const bodies = (await drain(url, 11)).map((m) => m.Body);
      expect(bodies.sort()).toEqual(
        messages
          .filter((_, i) => i !== 4)
          .map((m) => m.body)
          .sort(),
      );
    } finally {
      await deleteSqsQueues(client, { queue, fifo: false });
    }
  });

  it('FIFO queue: stores the batch’s other entries in order and sends no later batch', async () => {
    const queue = uniqueQueue('partial-fifo');
    try {
      const { url } = await ensureSqsQueues(client, { queue, fifo: true, deliveryLimit: 5 });
      const messages = withRefusedEntry(15, 4); // batches 0–9 and 10–14
      const err = await rejection(sendAll({ client, url, fifo: true }, messages));
      expect(err.unsent.map((u) => [u.index, u.code, u.senderFault])).toEqual([
        [4, 'InvalidAttributeValue', true],
        ...[10, 11, 12, 13, 14].map((i) => [i, 'NotSent', false]),
      ]);
      const bodies = (await drain(url, 9)).map((m) => m.Body);
      expect(bodies).toEqual(
        messages
          .slice(0, 10)
          .filter((_, i) => i !== 4)
          .map((m) => m.body),
      );
    } finally {
      await deleteSqsQueues(client, { queue, fifo: true });
    }
  });

  it('the transport’s own encoding never makes one: text SQS refuses round-trips', async () => {
    const queue = uniqueQueue('xmlchars');
    const transport = testTransport(client, { queue, fifo: true });
    try {
      const text = 'a\u0001b\ufffec\uffffd\u0000e';
      const payload = new TextEncoder().encode(JSON.stringify({ text }));
      const envelope = testEnvelope({ key: `k${text}`, payload });
      await transport.publish([{ envelope }]);
      const spy = createHandlerSpy();
      await transport.consume(spy.handler(), { concurrency: 1 });
      await spy.waitFor(envelope.id, 'processed');
      const got = spy.of('processed')[0]?.delivery.envelope;
      expect(got?.key).toBe(envelope.key);
      expect(Buffer.from(got?.payload ?? [])).toEqual(Buffer.from(payload));
    } finally {
      await transport.close();
      await deleteSqsQueues(client, { queue, fifo: true });
    }
  });
});
