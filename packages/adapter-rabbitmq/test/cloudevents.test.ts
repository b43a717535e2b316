import { randomBytes } from 'node:crypto';
import { createHandlerSpy } from '@onceflow/conformance';
import {
  type CloudEventJson,
  createEnvelope,
  type Envelope,
  fromCloudEvent,
  toCloudEvent,
} from '@onceflow/core';
import amqp from 'amqplib';
import { CloudEvent } from 'cloudevents';
import { afterAll, expect, it } from 'vitest';
import { createRabbitMqTransport, defaultAmqpUrl, deleteRabbitMqQueues } from '../src/index.js';

const queue = `onceflow-ce-${randomBytes(3).toString('hex')}`;
afterAll(() => deleteRabbitMqQueues({ queue }));

const comparable = (e: Envelope) => ({ ...e, payload: [...e.payload] });
const PREFIX = 'cloudEvents_';

/**
 * A CloudEvent as any consumer of the AMQP binding's binary mode reads it: `cloudEvents_*`
 * application properties as attributes, `content_type` as datacontenttype, the body as data;
 * the SDK (which has no AMQP binding) checks it against the spec.
 */
function readCloudEvent(msg: amqp.GetMessage): CloudEvent<unknown> {
  const attrs: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(msg.properties.headers ?? {})) {
    if (name.startsWith(PREFIX)) attrs[name.slice(PREFIX.length)] = String(v);
  }
  const contentType = msg.properties.contentType as string | undefined;
  const data = contentType?.startsWith('application/json')
    ? JSON.parse(msg.content.toString())
    : msg.content;
  return new CloudEvent<unknown>(
    { ...attrs, datacontenttype: contentType, data } as CloudEventJson,
    true,
  );
}

it('writes messages a CloudEvents consumer reads, and reads them back exactly, retries and dead letters included', async () => {
  const transport = createRabbitMqTransport({
    queue,
    wireFormat: 'cloudevents-binary',
    deliveryLimit: 3,
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

  // Another consumer, before onceflow's: read both off the queue, then put them back.
  const conn = await amqp.connect(defaultAmqpUrl());
  const ch = await conn.createChannel();
  const raw: amqp.GetMessage[] = [];
  for (let i = 0; i < 50 && raw.length < 2; i++) {
    const msg = await ch.get(queue, { noAck: false });
    if (msg) raw.push(msg);
    else await new Promise((r) => setTimeout(r, 50));
  }
  expect(raw).toHaveLength(2);
  for (const e of [fromHttp, plain]) {
    const msg = raw.find((m) => m.properties.messageId === e.id)!;
    expect(msg.properties.headers?.['x-onceflow-wire']).toBeUndefined();
    const read = readCloudEvent(msg).toJSON();
    const expected = new CloudEvent({ ...toCloudEvent(e) }, false).toJSON();
    expect(read).toMatchObject({ ...expected, partitionkey: e.key });
  }
  expect(raw.find((m) => m.properties.messageId === fromHttp.id)!.properties.headers).toMatchObject(
    {
      cloudEvents_id: inbound.id,
      cloudEvents_source: '/shop/orders',
      cloudEvents_subject: 'order-7',
      cloudEvents_tenantid: 'acme',
    },
  );
  ch.nackAll(true);
  await ch.close();
  await conn.close();

  // onceflow's own consumer: the same envelopes after a retry; past the limit, as a dead letter.
  const spy = createHandlerSpy(async (d) => {
    const first = spy.of('received').find((x) => x.id === d.envelope.id)?.attempt;
    if (d.envelope.id === plain.id && d.attempt === first) return d.retry({ delayMs: 0 });
    if (d.envelope.id === fromHttp.id) return d.retry({ delayMs: 0 });
    await d.ack();
  });
  const letters: Envelope[] = [];
  const sub = await transport.consume(spy.handler(), { concurrency: 2 });
  const dl = await transport.consumeDeadLetters(
    async (d) => {
      letters.push(d.envelope);
      await d.ack();
    },
    { concurrency: 1 },
  );
  await spy.waitForCount('processed', 1, { timeoutMs: 20_000 });
  for (let i = 0; i < 200 && letters.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  for (const e of [fromHttp, plain]) {
    for (const r of spy.of('received').filter((x) => x.id === e.id)) {
      expect(comparable(r.delivery.envelope)).toEqual(comparable(e));
    }
  }
  // Returned once by the reader above, so attempts start at 2; the retry raised it once more.
  const attempts = spy
    .of('received')
    .filter((x) => x.id === plain.id)
    .map((x) => x.attempt);
  expect(attempts).toEqual([attempts[0], attempts[0]! + 1]);
  expect(letters.map(comparable)).toEqual([comparable(fromHttp)]);
  await dl.close();
  await sub.close();
  await transport.close();
}, 60_000);
