import { waitUntil } from '@onceflow/conformance';
import amqp, { type Message } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAckBatcher } from '../src/acks.js';
import { defaultAmqpUrl } from '../src/index.js';

// On the shared broker, a queue of this run's own (exclusive to the connection, gone with it).
let conn: amqp.ChannelModel;
beforeAll(async () => {
  conn = await amqp.connect(defaultAmqpUrl());
});
afterAll(() => conn?.close());

/** Puts `bodies` on a fresh queue and receives them all, unacked, on a new channel. */
async function received(bodies: string[]) {
  const setup = await conn.createChannel();
  const { queue } = await setup.assertQueue('', { exclusive: true });
  for (const b of bodies) setup.sendToQueue(queue, Buffer.from(b));
  const channel = await conn.createChannel();
  const acks = createAckBatcher(channel);
  const got: Message[] = [];
  await channel.prefetch(bodies.length);
  await channel.consume(queue, (msg) => {
    if (msg === null) return;
    acks.received(msg);
    got.push(msg);
  });
  await waitUntil(() => got.length === bodies.length, { timeoutMs: 5_000, message: 'deliveries' });
  /** Closes the consuming channel (returning what it did not ack) and reads the queue. */
  const left = async () => {
    await channel.close();
    const rest: string[] = [];
    for (let m = await setup.get(queue); m; m = await setup.get(queue)) {
      rest.push(m.content.toString());
    }
    await setup.close();
    return rest;
  };
  return { acks, got, left };
}

describe('coalesced acks on a real channel', () => {
  it('acks a turn’s settled deliveries together and never one that is still running', async () => {
    const { acks, got, left } = await received(['a', 'b', 'c', 'd', 'e']);
    const [a, b, , d] = got as [Message, Message, Message, Message];
    await Promise.all([acks.ack(d), acks.ack(a), acks.ack(b)]); // `c` and `e` still running
    expect(await left()).toEqual(['c', 'e']);
  });

  it('acks a settled run in one multiple ack once the oldest settles', async () => {
    const { acks, got, left } = await received(['a', 'b', 'c']);
    const [a, b, c] = got as [Message, Message, Message];
    await acks.ack(c);
    await Promise.all([acks.ack(b), acks.ack(a)]);
    acks.flush();
    expect(await left()).toEqual([]);
  });

  it('writes the pending acks on flush, and rejects acks once the channel is gone', async () => {
    const { acks, got, left } = await received(['a', 'b']);
    const [a, b] = got as [Message, Message];
    const acked = acks.ack(a);
    acks.flush();
    await acked;
    expect(await left()).toEqual(['b']);
    await expect(acks.ack(b)).rejects.toThrow(/closed/i);
  });
});
