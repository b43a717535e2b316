import { randomBytes } from 'node:crypto';
import { createGate, sleep, testEnvelope, waitUntil } from '@onceflow/conformance';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { brokers, testOptions } from './brokers.js';

const topic = `onceflow-commits-${randomBytes(3).toString('hex')}`;
const options = { ...testOptions(topic), partitions: 1, commitIntervalMs: 200 };
const admin = new Kafka({ clientId: 'onceflow-test', brokers, logLevel: logLevel.NOTHING }).admin();

afterAll(async () => {
  await admin.disconnect();
  await removeKafkaTopology(options);
});

/** The work group's committed offset on the topic's one partition (-1 before any commit). */
async function committed(groupId: string): Promise<number> {
  const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return Number(entry?.partitions[0]?.offset ?? -1);
}

it('acks without waiting for the commit, commits settled records every commitIntervalMs while one of their batch is held and never past it, and close() resolves once the rest is committed', async () => {
  await admin.connect();
  const transport = createKafkaTransport(options);
  await transport.start();
  const events = Array.from({ length: 10 }, (_, i) => testEnvelope({ key: `k-${i}` }));
  const held = events[4];
  const hold = createGate();
  const acked: string[] = [];
  const sub = await transport.consume(
    async (d) => {
      if (d.envelope.id === held?.id) await hold.opened;
      await d.ack();
      acked.push(d.envelope.id);
    },
    { concurrency: 4 },
  );
  await transport.publish(events.map((envelope) => ({ envelope }))); // one request: one batch

  await waitUntil(() => acked.length === 9, {
    timeoutMs: 30_000,
    message: 'every record but the held one acked while it is held',
  });
  await waitUntil(async () => (await committed(transport.groupId)) === 4, {
    timeoutMs: 10_000,
    message: 'the settled prefix (offsets 0-3) committed while the batch is still in hand',
  });
  await sleep(options.commitIntervalMs * 3);
  expect(await committed(transport.groupId), 'never past the held record').toBe(4);

  hold.open();
  await waitUntil(() => acked.length === 10, {
    timeoutMs: 10_000,
    message: 'the held record acked',
  });
  await sub.close();
  expect(await committed(transport.groupId), 'committed by the time close() resolved').toBe(10);
  await transport.close();
}, 90_000);
