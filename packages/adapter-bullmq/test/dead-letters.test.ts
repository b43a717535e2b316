import {
  type Gate,
  createGate,
  createHandlerSpy,
  sameBytes,
  sleep,
  testEnvelope,
} from '@onceflow/conformance';
import { UNDECODABLE } from '@onceflow/core/kit';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullmqTransport, deleteBullmqQueue } from '../src/index.js';
import { redisUrl, runPrefix } from './helpers.js';

const url = redisUrl();
const prefix = runPrefix();
const connection = new Redis(url, { maxRetriesPerRequest: null });
const used: string[] = [];
const gates: Gate[] = [];
let queues = 0;

/** A fresh queue name and a transport on it with short locks. */
const open = (options: { lockMs?: number; deliveryLimit?: number } = {}) => {
  const queue = `dl-${++queues}`;
  used.push(queue);
  const transport = createBullmqTransport({
    url,
    prefix,
    queue,
    stalledIntervalMs: 100,
    ...options,
  });
  return { queue, transport };
};

afterAll(async () => {
  for (const gate of gates) gate.open();
  for (const queue of used) await deleteBullmqQueue({ url, prefix, queue });
  await connection.quit();
});

describe('bullmq dead-letter queue', () => {
  it('moves a job whose lock expired at its deliveryLimit-th delivery to the dead-letter queue without handing it out again; a dead letter retried there comes back with attempt + 1, and an ack removes it', async () => {
    const { queue, transport } = open({ lockMs: 300, deliveryLimit: 3 });
    // The dead-letter queue is read with a long lock: the short one is for the crash loop on the
    // work queue only, and a stall of the machine could run it out between a dead letter's fetch
    // and its retry or ack (redelivering it, a delivery this test would count).
    const readerSide = createBullmqTransport({ url, prefix, queue, stalledIntervalMs: 100 });
    const hang = createGate();
    gates.push(hang);
    try {
      const event = testEnvelope();
      // Every delivery hangs past its lock: a crash loop, as BullMQ's stalled check sees it.
      const work = createHandlerSpy(() => hang.opened, { timeoutMs: 10_000 });
      await transport.consume(work.handler('work'), { concurrency: 5 });
      await transport.publish([{ envelope: event }]);
      await work.waitFor(event.id, 'received', { attempt: 3 });

      const letters = createHandlerSpy(
        (d) => (d.attempt === 3 ? d.retry({ delayMs: 0 }) : d.ack()),
        { timeoutMs: 10_000 },
      );
      await readerSide.consumeDeadLetters(letters.handler('dlq'), { concurrency: 1 });
      const first = await letters.waitFor(event.id, 'retried');
      expect(first.attempt, 'the deliveries it had on the work queue').toBe(3);
      const got = first.delivery.envelope;
      expect({ ...got, payload: undefined }).toEqual({ ...event, payload: undefined });
      expect(sameBytes(got.payload, event.payload), 'payload bytes kept').toBe(true);
      const done = await letters.waitFor(event.id, 'processed');
      expect(done.attempt).toBe(4);

      await sleep(1_000); // several lock lengths and stalled checks of the work queue
      expect(work.count('received', event.id), 'no delivery past the limit').toBe(3);
      expect(letters.count('received', event.id)).toBe(2);
      const dead = new Queue(`${queue}-dead-letters`, { connection, prefix });
      try {
        const left = await dead.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        expect(left, 'acked: gone from the dead-letter queue').toEqual({
          waiting: 0,
          active: 0,
          delayed: 0,
          prioritized: 0,
        });
      } finally {
        await dead.close();
      }
    } finally {
      hang.open();
      await readerSide.close();
      await transport.close();
    }
  }, 30_000);

  it('delivers a job that is not wire format v1 as an onceflow.undecodable envelope carrying its bytes', async () => {
    const { queue, transport } = open();
    const raw = new Queue(queue, { connection, prefix });
    try {
      await raw.add('foreign', 'not an envelope', { jobId: 'foreign-text' });
      await raw.add('foreign', { some: 'object' }, { jobId: 'foreign-json' });
      const spy = createHandlerSpy(undefined, { timeoutMs: 10_000 });
      await transport.consume(spy.handler(), { concurrency: 2 });
      await spy.waitForCount('processed', 2);
      const payloads = spy.of('processed').map(({ delivery: { envelope } }) => {
        expect({ source: envelope.source, type: envelope.type }).toEqual(UNDECODABLE);
        return new TextDecoder().decode(envelope.payload);
      });
      expect(payloads.sort()).toEqual(['not an envelope', '{"some":"object"}']);
    } finally {
      await raw.close();
      await transport.close();
    }
  }, 30_000);
});
