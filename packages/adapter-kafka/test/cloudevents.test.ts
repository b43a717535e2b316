import { randomBytes } from 'node:crypto';
import { createHandlerSpy } from '@onceflow/conformance';
import {
  createEnvelope,
  type CloudEventJson,
  type Envelope,
  fromCloudEvent,
  toCloudEvent,
} from '@onceflow/core';
import { CloudEvent, Kafka as CloudEventsKafka } from 'cloudevents';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { createKafkaTransport, removeKafkaTopology } from '../src/index.js';
import { brokers, testOptions } from './brokers.js';

const topic = `onceflow-ce-${randomBytes(3).toString('hex')}`;
afterAll(() => removeKafkaTopology(testOptions(topic)));

const comparable = (e: Envelope) => ({ ...e, payload: [...e.payload] });

/** Reads `count` records of the topic from the start with a plain kafkajs consumer of its own group. */
async function readRaw(count: number) {
  const kafka = new Kafka({ brokers, clientId: 'ce-reader', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `${topic}.ce-reader` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const records: { key: string; value: Buffer; headers: Record<string, string> }[] = [];
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [name, v] of Object.entries(message.headers ?? {})) headers[name] = String(v);
        records.push({
          key: message.key?.toString() ?? '',
          value: message.value ?? Buffer.alloc(0),
          headers,
        });
        if (records.length >= count) resolve();
      },
    });
  });
  await Promise.race([
    done,
    new Promise((_, reject) => setTimeout(() => reject(new Error('no records')), 20_000)),
  ]);
  await consumer.disconnect();
  return records;
}

it("writes records the cloudevents SDK's Kafka binding reads, and reads them back exactly, retries included", async () => {
  const transport = createKafkaTransport({
    ...testOptions(topic),
    wireFormat: 'cloudevents-binary',
  });
  await transport.start();
  const inbound = new CloudEvent({
    id: `A-${randomBytes(3).toString('hex')}`,
    source: '/shop/orders',
    type: 'order.created',
    subject: 'order-7',
    time: '2026-12-07T10:00:00.000Z',
    data: { order: 7 },
    tenantid: 'acme',
  });
  const fromHttp = fromCloudEvent(inbound.toJSON() as CloudEventJson, { source: 'orders' });
  const plain = createEnvelope({
    id: `evt_${randomBytes(3).toString('hex')}`,
    source: 'stripe',
    type: 'invoice.paid',
    key: 'cus_1',
    payload: { amount: 5 },
    occurredAt: '2026-12-07T09:00:00.000Z',
  });
  await transport.publish([{ envelope: fromHttp }, { envelope: plain }]);

  // Another CloudEvents consumer: the SDK's Kafka binding on the raw records.
  const records = await readRaw(2);
  for (const e of [fromHttp, plain]) {
    const record = records.find((r) => r.headers['x-onceflow-event-id'] === e.id)!;
    expect(record.headers['x-onceflow-wire']).toBeUndefined();
    const read = CloudEventsKafka.toEvent({ ...record, body: record.value }) as CloudEvent;
    const expected = new CloudEvent({ ...toCloudEvent(e) }, false).toJSON();
    const { data, ...attrs } = read.toJSON();
    const { data: expectedData, ...expectedAttrs } = expected;
    expect(attrs).toMatchObject({ ...expectedAttrs, partitionkey: e.key });
    expect(data instanceof Uint8Array ? JSON.parse(Buffer.from(data).toString()) : data).toEqual(
      expectedData,
    );
  }
  expect(
    records.find((r) => r.headers['x-onceflow-event-id'] === fromHttp.id)!.headers,
  ).toMatchObject({
    ce_id: inbound.id,
    ce_source: '/shop/orders',
    ce_type: 'order.created',
    ce_subject: 'order-7',
    ce_tenantid: 'acme',
    'content-type': 'application/json',
  });

  // onceflow's own consumer: the same envelopes, also after a retry through the retry topic.
  const spy = createHandlerSpy(async (d) => {
    if (d.attempt === 1) return d.retry({ delayMs: 0 });
    await d.ack();
  });
  const sub = await transport.consume(spy.handler(), { concurrency: 2 });
  await spy.waitForCount('processed', 2, { timeoutMs: 30_000 });
  for (const e of [fromHttp, plain]) {
    const seen = spy.of('received').filter((r) => r.id === e.id);
    expect(seen.map((r) => r.attempt).sort()).toEqual([1, 2]);
    for (const r of seen) expect(comparable(r.delivery.envelope)).toEqual(comparable(e));
  }
  await sub.close();
  await transport.close();
}, 60_000);
