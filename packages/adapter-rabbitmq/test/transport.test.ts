import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { ONCEFLOW_HEADERS } from '@onceflow/core/kit';
import { toOnceflowError } from '@onceflow/core';
import amqp, { type Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { createRabbitMqTransport, defaultAmqpUrl, deleteRabbitMqQueues } from '../src/index.js';
import { fromDeadLetterMessage, fromWorkMessage, toWorkMessage } from '../src/marshal.js';

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
  });

  it('reads a dead letter the broker moved itself (delivery limit) with its reason', () => {
    const envelope = testEnvelope();
    const out = toWorkMessage('q', { envelope, dedupeKey: 'k', attempt: 1 }, 1 << 20);
    const letter = fromDeadLetterMessage(
      asDelivered(out, { 'x-first-death-reason': 'delivery_limit', 'x-delivery-count': 20 }),
    );
    expect(letter).toMatchObject({ id: 'k', reason: 'broker: delivery_limit', attempts: 20 });
    expect(out.options.headers?.[ONCEFLOW_HEADERS.attempt], 'attempt 1 is implied').toBeUndefined();
  });
});

describe('rabbitmq dead letters', () => {
  it('keeps one dead letter per dedupe key when a message was dead-lettered twice', async () => {
    const queue = `onceflow-dl-twice-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue });
    await transport.start();
    const event = testEnvelope();
    let dead = 0;
    const sub = await transport.consume(
      async (d) => {
        await d.deadLetter({ reason: `copy ${++dead}` });
      },
      { concurrency: 1, lockMs: 1_000 },
    );
    await transport.publish([{ envelope: event }, { envelope: event }]); // no broker dedupe
    await waitUntil(() => dead === 2, { timeoutMs: 5_000, message: 'both copies dead-lettered' });
    await sub.close();
    expect(await transport.deadLetters.count()).toBe(1);
    const letters = await transport.deadLetters.list();
    expect(letters.map((l) => [l.id, l.reason])).toEqual([
      [`${event.source}:${event.id}`, 'copy 1'],
    ]);
    await transport.close();
    await deleteRabbitMqQueues({ queue });
  });
});

describe('rabbitmq publish failures', () => {
  it('rejects an unroutable message (its queue was deleted) instead of dropping it', async () => {
    const queue = `onceflow-unroutable-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue });
    await transport.start();
    const conn = await amqp.connect(defaultAmqpUrl());
    await (await conn.createChannel()).deleteQueue(queue);
    await conn.close();
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
    expect(await receiverSide.deadLetters.count(), 'dead-letter queue declared too').toBe(0);

    const workerSide = createRabbitMqTransport({ queue });
    const seen: string[] = [];
    const sub = await workerSide.consume(
      async (d) => {
        seen.push(d.envelope.id);
        await d.ack();
      },
      { concurrency: 2, lockMs: 5_000 },
    );
    await waitUntil(() => seen.length === 2, { timeoutMs: 5_000, message: 'both delivered' });
    expect(seen).toContain(event.id);
    await sub.close();
    await Promise.all([receiverSide.close(), workerSide.close()]);
    await expect(receiverSide.publish([{ envelope: event }])).rejects.toThrow(/after close/);
    await deleteRabbitMqQueues({ queue });
  });
});
