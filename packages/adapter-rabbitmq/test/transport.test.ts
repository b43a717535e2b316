import { NON_UTF8_BYTES, sameBytes, testEnvelope, waitUntil } from '@onceflow/conformance';
import { ONCEFLOW_HEADERS, UNDECODABLE } from '@onceflow/core/kit';
import { type Delivery, type Envelope, isOnceflowError, toOnceflowError } from '@onceflow/core';
import type { Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '../src/index.js';
import { useTestConnection } from './crashing-consumer.js';
import { fromDeadLetterMessage, fromWorkMessage, toWorkMessage } from '../src/marshal.js';

const { conn, crashOnce } = useTestConnection();

/** Messages ready on `queue`. */
async function depth(queue: string): Promise<number> {
  const ch = await conn().createChannel();
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await ch.close();
  }
}

/** The same envelope, payload bytes compared as bytes. */
function expectSameEvent(got: Envelope | undefined, want: Envelope): void {
  expect({ ...got, payload: undefined }).toEqual({ ...want, payload: undefined });
  expect(sameBytes(got?.payload ?? new Uint8Array(), want.payload), 'payload bytes').toBe(true);
}

/** Collects the deliveries `transport.consumeDeadLetters` hands out, acking each. */
function collect(): { handler: (d: Delivery) => Promise<void>; got: Delivery[] } {
  const got: Delivery[] = [];
  return {
    got,
    handler: async (d) => {
      got.push(d);
      await d.ack();
    },
  };
}

const asDelivered = (
  out: ReturnType<typeof toWorkMessage>,
  extra: Record<string, unknown> = {},
  redelivered = false,
) =>
  ({
    content: out.body,
    fields: { redelivered },
    properties: { ...out.options, headers: { ...out.options.headers, ...extra } },
  }) as unknown as Message;

describe('rabbitmq wire mapping', () => {
  it('counts attempts from its header plus the broker’s returns', () => {
    const envelope = testEnvelope();
    const out = toWorkMessage('q', { envelope, dedupeKey: 'k', attempt: 2 }, 1 << 20);
    expect(out.options.messageId).toBe(envelope.id);
    expect(out.options.persistent).toBe(true);
    expect(fromWorkMessage(asDelivered(out)).attempt).toBe(2);
    expect(fromWorkMessage(asDelivered(out, { 'x-delivery-count': 2 }, true)).attempt).toBe(4);
    expect(
      fromWorkMessage(asDelivered(out, {}, true)).attempt,
      'classic queue: redelivered flag',
    ).toBe(3);
    expect(
      fromWorkMessage(asDelivered(out, { 'x-delivery-count': 0, 'x-acquired-count': 3 }, true))
        .attempt,
      'RabbitMQ 4: every acquisition counted, failed or not',
    ).toBe(5);
  });

  it('reads a dead letter the broker moved itself (delivery limit) with its reason', () => {
    const envelope = testEnvelope();
    const out = toWorkMessage('q', { envelope, dedupeKey: 'k', attempt: 1 }, 1 << 20);
    const letter = fromDeadLetterMessage(
      asDelivered(out, { 'x-first-death-reason': 'delivery_limit' }),
      20,
    );
    expect(letter.dedupeKey).toBe('k');
    expect(letter.fields).toMatchObject({ reason: 'broker: delivery_limit', attempts: 20 });
    expect(out.options.headers?.[ONCEFLOW_HEADERS.attempt], 'attempt 1 is implied').toBeUndefined();
  });

  it('reads a body that is not wire format v1 as an undecodable envelope with the raw bytes', () => {
    const msg = {
      content: Buffer.from(NON_UTF8_BYTES),
      fields: { redelivered: false },
      properties: { headers: {} },
    } as unknown as Message;
    const { envelope, attempt } = fromWorkMessage(msg);
    expect({ source: envelope.source, type: envelope.type }).toEqual(UNDECODABLE);
    expect(sameBytes(envelope.payload, NON_UTF8_BYTES)).toBe(true);
    expect(attempt).toBe(1);
  });
});

describe('rabbitmq delivery limit', () => {
  it('moves a message its crashed consumers returned deliveryLimit times to the dead-letter queue, without running the handler again', async () => {
    const queue = `onceflow-crash-loop-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, deliveryLimit: 3 });
    const event = testEnvelope();
    await transport.publish([{ envelope: event }]);
    for (let i = 0; i < 3; i++) await crashOnce(queue); // deliveries 1..3, never settled
    const handled: number[] = [];
    await transport.consume(
      async (d) => {
        handled.push(d.attempt);
        await d.ack();
      },
      { concurrency: 1 },
    );
    const letters = collect();
    await transport.consumeDeadLetters(letters.handler, { concurrency: 1 });
    await waitUntil(() => letters.got.length === 1, { timeoutMs: 5_000, message: 'dead letter' });
    expectSameEvent(letters.got[0]?.envelope, event);
    expect(letters.got[0]?.attempt, 'the deliveries it had').toBe(3);
    expect(handled, 'no fourth delivery').toEqual([]);
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });

  it('the quorum queue’s own x-delivery-limit dead-letters what the adapter could not move', async () => {
    const queue = `onceflow-broker-limit-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, deliveryLimit: 2 });
    const event = testEnvelope();
    await transport.publish([{ envelope: event }]);
    for (let i = 0; i < 3; i++) await crashOnce(queue); // delivery 3 would have been moved by us
    await waitUntil(async () => (await depth(`${queue}.dlq`)) === 1, {
      timeoutMs: 5_000,
      message: 'the broker dead-lettered it',
    });
    const letters = collect();
    await transport.consumeDeadLetters(letters.handler, { concurrency: 1 });
    await waitUntil(() => letters.got.length === 1, { timeoutMs: 5_000, message: 'dead letter' });
    expectSameEvent(letters.got[0]?.envelope, event);
    expect(letters.got[0]?.attempt).toBe(2);
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });

  it('consumeDeadLetters: retry puts a dead letter back after its delay, ack removes it', async () => {
    const queue = `onceflow-dl-retry-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, deliveryLimit: 1 });
    const event = testEnvelope();
    await transport.consume((d) => d.retry({ delayMs: 0, error: undefined }), { concurrency: 1 });
    await transport.publish([{ envelope: event }]);
    const seen: { at: number; attempt: number }[] = [];
    await transport.consumeDeadLetters(
      async (d) => {
        seen.push({ at: Date.now(), attempt: d.attempt });
        if (seen.length === 1) return d.retry({ delayMs: 200 });
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitUntil(() => seen.length === 2, { timeoutMs: 5_000, message: 'back after retry' });
    const [first, second] = seen as [(typeof seen)[0], (typeof seen)[0]];
    expect(second.at - first.at).toBeGreaterThanOrEqual(200);
    expect([first.attempt, second.attempt]).toEqual([1, 1]);
    await transport.close();
    await waitUntil(async () => (await depth(`${queue}.dlq`)) === 0, {
      timeoutMs: 5_000,
      message: 'acked dead letter removed',
    });
    await deleteRabbitMqQueues({ queue });
  });

  it('refuses with a ConfigError a queue declared with another deliveryLimit', async () => {
    const queue = `onceflow-limit-mismatch-${Date.now()}`;
    const first = createRabbitMqTransport({ queue });
    await first.start();
    const second = createRabbitMqTransport({ queue, deliveryLimit: 5 });
    const error = await second.start().catch((e: unknown) => e);
    expect(isOnceflowError(error, 'CONFIG'), String(error)).toBe(true);
    expect(String((error as Error).message)).toMatch(/x-delivery-limit/);
    await Promise.all([first.close(), second.close()]);
    await deleteRabbitMqQueues({ queue });
  });
});

describe('rabbitmq undecodable messages', () => {
  it('hands a message that is not wire format v1 to the handler as onceflow.undecodable with its bytes', async () => {
    const queue = `onceflow-undecodable-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue });
    await transport.start();
    const ch = await conn().createChannel();
    ch.sendToQueue(queue, Buffer.from(NON_UTF8_BYTES), { persistent: true });
    await ch.close();
    const got: Delivery[] = [];
    await transport.consume(
      async (d) => {
        got.push(d);
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitUntil(() => got.length === 1, { timeoutMs: 5_000, message: 'delivered' });
    const envelope = got[0]?.envelope;
    expect({ source: envelope?.source, type: envelope?.type }).toEqual(UNDECODABLE);
    expect(sameBytes(envelope?.payload ?? new Uint8Array(), NON_UTF8_BYTES)).toBe(true);
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });
});

describe('rabbitmq publish failures', () => {
  it('rejects an unroutable message (its queue was deleted) instead of dropping it', async () => {
    const queue = `onceflow-unroutable-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue });
    await transport.start();
    const ch = await conn().createChannel();
    await ch.deleteQueue(queue);
    await ch.close();
    const error = await transport.publish([{ envelope: testEnvelope() }]).catch((e: unknown) => e);
    expect(toOnceflowError(error).code).toBe('TRANSPORT_UNAVAILABLE');
    expect(String((error as Error).message)).toMatch(/unroutable/);
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });

  it('rejects publish with TRANSPORT_UNAVAILABLE when the broker cannot be reached', async () => {
    const transport = createRabbitMqTransport({
      queue: 'onceflow-nowhere',
      url: 'amqp://guest:guest@127.0.0.1:5678',
    });
    const error = await transport.publish([{ envelope: testEnvelope() }]).catch((e: unknown) => e);
    expect(toOnceflowError(error).code).toBe('TRANSPORT_UNAVAILABLE');
    await expect(transport.start()).rejects.toMatchObject({ code: 'TRANSPORT_UNAVAILABLE' });
    await transport.close();
  });
});

describe('rabbitmq without start()', () => {
  it('publish declares the topology once and stores the message (a receiver only publishes)', async () => {
    const queue = `onceflow-lazy-${Date.now()}`;
    const receiverSide = createRabbitMqTransport({ queue });
    const event = testEnvelope();
    await receiverSide.publish([{ envelope: event }]);
    await receiverSide.publish([{ envelope: testEnvelope() }]);
    expect(await depth(`${queue}.dlq`), 'dead-letter queue declared too').toBe(0);

    const workerSide = createRabbitMqTransport({ queue });
    const seen: string[] = [];
    const sub = await workerSide.consume(
      async (d) => {
        seen.push(d.envelope.id);
        await d.ack();
      },
      { concurrency: 2 },
    );
    await waitUntil(() => seen.length === 2, { timeoutMs: 5_000, message: 'both delivered' });
    expect(seen).toContain(event.id);
    await sub.close();
    await Promise.all([receiverSide.close(), workerSide.close()]);
    await expect(receiverSide.publish([{ envelope: event }])).rejects.toThrow(/after close/);
    await deleteRabbitMqQueues({ queue });
  });
});
