import { CloudEvent, Kafka, type KafkaMessage } from 'cloudevents';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CloudEventJson } from '../../src/cloudevents/attributes.js';
import {
  AMQP_BINDING,
  decodeBinary,
  encodeBinary,
  KAFKA_BINDING,
} from '../../src/cloudevents/binary.js';
import { fromCloudEvent, toCloudEvent } from '../../src/cloudevents/mapping.js';
import { createEnvelope, type Envelope } from '../../src/envelope.js';
import { claimCheckReference } from '../../src/wire.js';
import { decodeMessage, encodeMessage } from '../../src/transport-kit/wire-format.js';

const comparable = (e: Envelope) => ({ ...e, payload: [...e.payload] });
const roundTrip = (e: Envelope, binding = KAFKA_BINDING) => {
  const m = encodeMessage(e, 'cloudevents-binary', binding, 1 << 20);
  return decodeMessage(m.body, m.headers, m.contentType, binding);
};

const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const envelope = fc
  .record({
    id: fc.string({ minLength: 1, maxLength: 20 }),
    source: fc.stringMatching(/^[\w.-]{1,12}$/),
    type: fc.string({ minLength: 1, maxLength: 20 }),
    key: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    payload: fc.uint8Array({ maxLength: 64 }),
    headers: fc.dictionary(
      fc.oneof(
        headerName,
        headerName.map((h) => `ce-${h}`),
      ),
      fc.string({ maxLength: 12 }),
      { maxKeys: 5 },
    ),
    occurredAt: fc.option(
      fc
        .date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
        .map((d) => d.toISOString()),
      { nil: undefined },
    ),
  })
  .map((r) => createEnvelope({ ...r, payload: r.payload }));

describe('CloudEvents binary mode on a broker message', () => {
  it('reads back exactly the envelope it wrote, on either binding (property)', () => {
    fc.assert(
      fc.property(envelope, fc.constantFrom(KAFKA_BINDING, AMQP_BINDING), (e, binding) => {
        expect(comparable(roundTrip(e, binding))).toEqual(comparable(e));
      }),
    );
  });

  it('keeps a claim-check reference a reference, and an HTTP CloudEvent its attributes', () => {
    const ce = new CloudEvent({
      id: 'A1',
      source: '/orders',
      type: 'order.created',
      subject: 'o-1',
      data: { n: 1 },
      tenantid: 'acme',
    });
    const e = fromCloudEvent(ce.toJSON() as CloudEventJson, { source: 'orders' });
    expect(comparable(roundTrip(e))).toEqual(comparable(e));
    const ref = claimCheckReference(e);
    expect(comparable(roundTrip(ref))).toEqual(comparable(ref));
  });

  it("is what the cloudevents SDK's Kafka binding reads as the envelope's CloudEvent", () => {
    const inbound = new CloudEvent({
      id: 'A1',
      source: '/orders',
      type: 'order.created',
      subject: 'o-1',
      time: '2026-12-07T10:00:00.000Z',
      data: { n: 1 },
      tenantid: 'acme',
    });
    const plain = createEnvelope({
      id: 'evt_1',
      source: 'stripe',
      type: 'invoice.paid',
      key: 'cus_1',
      payload: { amount: 5 },
      occurredAt: '2026-12-07T09:00:00.000Z',
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    for (const e of [
      fromCloudEvent(inbound.toJSON() as CloudEventJson, { source: 'orders' }),
      plain,
    ]) {
      const m = encodeMessage(e, 'cloudevents-binary', KAFKA_BINDING, 1 << 20);
      const record: KafkaMessage = {
        key: e.key ?? '',
        value: m.body,
        body: m.body,
        headers: { ...m.headers, 'content-type': m.contentType },
      };
      const read = Kafka.toEvent(record) as CloudEvent;
      const ours = new CloudEvent({ ...toCloudEvent(e) }, false);
      const { data: readData, ...readAttrs } = read.toJSON();
      const { data: ourData, ...ourAttrs } = ours.toJSON();
      // The SDK parses JSON data of a binary-mode message (older versions leave the bytes).
      const data =
        readData instanceof Uint8Array ? JSON.parse(Buffer.from(readData).toString()) : readData;
      expect(data).toEqual(ourData);
      expect(readAttrs).toMatchObject({ ...ourAttrs, partitionkey: e.key ?? '' });
      expect(
        Object.keys(readAttrs)
          .filter((k) => k.startsWith('onceflow'))
          .sort(),
      ).toEqual(expect.arrayContaining(['onceflowhash', 'onceflowreceived']));
    }
  });

  it('reads a CloudEvent another producer wrote, and leaves onceflow messages to wire v1', () => {
    const foreign = Kafka.binary(
      new CloudEvent({
        id: 'x-1',
        source: '/sensors',
        type: 'reading',
        subject: 'room-4',
        data: { c: 21 },
      }),
    );
    const e = decodeMessage(
      Buffer.from(JSON.stringify(foreign.value)),
      foreign.headers,
      foreign.headers['content-type'] as string,
      KAFKA_BINDING,
    );
    expect(e).toMatchObject({ id: 'x-1', source: '/sensors', type: 'reading', key: 'room-4' });
    const v1 = encodeMessage(e, 'onceflow', KAFKA_BINDING, 1 << 20);
    expect(comparable(decodeMessage(v1.body, {}, v1.contentType, KAFKA_BINDING))).toEqual(
      comparable(e),
    );
    const broken = decodeMessage(
      Buffer.from('x'),
      { ce_specversion: '1.0' },
      undefined,
      KAFKA_BINDING,
    );
    expect(broken.type).toBe('onceflow.undecodable');
    expect(() => encodeMessage(e, 'cloudevents-binary', KAFKA_BINDING, 10)).toThrow(
      /over this transport's limit/,
    );
    expect(encodeBinary(e, AMQP_BINDING).headers.cloudEvents_id).toBe('x-1');
    expect(
      decodeBinary(
        {
          'cloudEvents:specversion': '1.0',
          'cloudEvents:id': 'a',
          'cloudEvents:source': 's',
          'cloudEvents:type': 't',
        },
        undefined,
        new Uint8Array(),
        AMQP_BINDING,
      ).id,
    ).toBe('a');
  });
});
