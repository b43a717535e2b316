import { randomBytes } from 'node:crypto';
import { createHandlerSpy, testEnvelope, waitUntil } from '@onceflow/conformance';
import { ONCEFLOW_HEADERS } from '@onceflow/core/kit';
import { Kafka, type KafkaMessage, logLevel } from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology, topicNames } from '../src/index.js';
import { brokers, testOptions } from './brokers.js';

const topic = `onceflow-dlq-${randomBytes(3).toString('hex')}`;
const options = { ...testOptions(topic), deliveryLimit: 2 };
const kafka = new Kafka({ clientId: 'onceflow-test', brokers, logLevel: logLevel.NOTHING });
afterAll(() => removeKafkaTopology(options));

/** Every record on the dead-letter topic so far, read in a throwaway group. */
async function dlqRecords(count: number): Promise<KafkaMessage[]> {
  const consumer = kafka.consumer({ groupId: `${topic}.raw.${randomBytes(3).toString('hex')}` });
  const got: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: topicNames(topic, 2).dlq, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message) });
    await waitUntil(() => got.length >= count, { timeoutMs: 20_000, message: 'dlq records' });
    return got;
  } finally {
    await consumer.disconnect();
  }
}

const header = (m: KafkaMessage | undefined, name: string) => m?.headers?.[name]?.toString();

it('a retry from the deliveryLimit-th delivery goes to <topic>.dlq with the dead-letter headers; a retry there comes back no earlier than its delay with attempt + 1; ack commits it; tombstones of earlier versions are skipped', async () => {
  const transport = createKafkaTransport(options);
  const event = testEnvelope({ key: 'k-1' });
  await transport.start();
  const producer = kafka.producer();
  await producer.connect();
  // what an earlier version's purge left on the dead-letter topic
  await producer.send({ topic: `${topic}.dlq`, messages: [{ key: 'purged', value: null }] });
  await producer.disconnect();

  const work = createHandlerSpy((d) =>
    d.retry({ delayMs: 0, error: { code: 'RETRY_LATER', name: 'Error', message: 'boom' } }),
  );
  await transport.consume(work.handler(), { concurrency: 1 });
  await transport.publish([{ envelope: event }]);
  await work.waitFor(event.id, 'retried', { attempt: 2 });

  const retryMs = 300;
  let retriedAt = 0;
  const letters = createHandlerSpy(async (d) => {
    if (d.attempt === 2) {
      retriedAt = Date.now();
      return d.retry({ delayMs: retryMs });
    }
    return d.ack();
  });
  const sub = await transport.consumeDeadLetters(letters.handler('dlq'), { concurrency: 1 });
  const again = await letters.waitFor(event.id, 'processed');
  expect(again.attempt, 'a retry on the dead-letter topic adds one attempt').toBe(3);
  expect(again.at - retriedAt, 'not before its delay').toBeGreaterThanOrEqual(retryMs);
  expect(letters.count('received'), 'the tombstone is not delivered').toBe(2);
  expect(work.count('received', event.id), 'no delivery past the limit').toBe(2);

  const [moved, retried] = (await dlqRecords(3)).filter((m) => m.value !== null);
  expect(header(moved, ONCEFLOW_HEADERS.attempt), 'its delivery count').toBe('2');
  expect(header(moved, ONCEFLOW_HEADERS.deadLetterAttempts)).toBe('2');
  expect(header(moved, ONCEFLOW_HEADERS.deadLetterReason)).toMatch(/delivery limit/);
  expect(header(moved, ONCEFLOW_HEADERS.deadLetterError)).toContain('boom');
  expect(header(retried, ONCEFLOW_HEADERS.attempt)).toBe('3');
  expect(header(retried, ONCEFLOW_HEADERS.deadLetterReason), 'kept on a retry').toBe(
    header(moved, ONCEFLOW_HEADERS.deadLetterReason),
  );
  await sub.close();

  // committed past every record, the tombstone included
  const admin = kafka.admin();
  await admin.connect();
  const dlq = topicNames(topic, 2).dlq;
  const ends = await admin.fetchTopicOffsets(dlq);
  const [committed] = await admin.fetchOffsets({
    groupId: `${transport.groupId}.dlq`,
    topics: [dlq],
  });
  await admin.disconnect();
  // -1: nothing committed, on a partition that has nothing to commit
  const at = (p: number) =>
    Math.max(0, Number(committed?.partitions.find((c) => c.partition === p)?.offset ?? -1));
  for (const end of ends)
    expect(at(end.partition), `partition ${end.partition}`).toBe(Number(end.high));
  await transport.close();
}, 60_000);
