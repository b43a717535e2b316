import { randomBytes } from 'node:crypto';
import { createHandlerSpy, testEnvelope } from '@onceflow/conformance';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology, topicNames } from '../src/index.js';
import { brokers, testOptions } from './brokers.js';

const topic = `onceflow-lazy-${randomBytes(3).toString('hex')}`;
afterAll(() => removeKafkaTopology(testOptions(topic)));

it('publish without start() creates the topics as configured (not the broker’s auto-created defaults) and stores the record', async () => {
  const options = testOptions(topic);
  // This publish also connects and creates four topics: under load that takes longer than the
  // receiver's 500 ms default deadline, which is not what this test is about.
  const receiverSide = createKafkaTransport({ ...options, publishTimeoutMs: 30_000 });
  const event = testEnvelope();
  await receiverSide.publish([{ envelope: event }]);

  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const names = topicNames(topic, 2);
  const { topics } = await admin.fetchTopicMetadata({
    topics: [names.main, ...names.retries, names.dlq],
  });
  await admin.disconnect();
  expect(topics.find((t) => t.name === names.main)?.partitions).toHaveLength(2);
  expect(topics.map((t) => t.name).sort()).toEqual(
    [names.main, ...names.retries, names.dlq].sort(),
  );

  const workerSide = createKafkaTransport(options);
  const spy = createHandlerSpy(async (d) => d.ack());
  const sub = await workerSide.consume(spy.handler(), { concurrency: 1 });
  await spy.waitFor(event.id, 'processed');
  await sub.close();
  await Promise.all([receiverSide.close(), workerSide.close()]);
  await expect(receiverSide.publish([{ envelope: event }])).rejects.toThrow(/after close/);
});
