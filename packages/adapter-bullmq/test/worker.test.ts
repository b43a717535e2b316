import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { createWorker, defineHandler, type Envelope } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullmqTransport, deleteBullmqQueue, jobIdOf } from '../src/index.js';
import { redisUrl, runPrefix } from './helpers.js';

// The worker on a real Redis: every dead letter ends in the event record, and nothing is left
// waiting on the work queue or the dead-letter queue once it is recorded.
const url = redisUrl();
const prefix = runPrefix();
const connection = new Redis(url, { maxRetriesPerRequest: null });
const used: string[] = [];
let queues = 0;
const freshQueue = () => {
  const queue = `worker-${++queues}`;
  used.push(queue);
  return queue;
};

afterAll(async () => {
  for (const queue of used) await deleteBullmqQueue({ url, prefix, queue });
  await connection.quit();
});

/** Jobs still to be delivered (waiting, active or delayed) on the queue and its dead-letter queue. */
async function pending(queue: string): Promise<[number, number]> {
  const counts = await Promise.all(
    [queue, `${queue}-dead-letters`].map(async (name) => {
      const q = new Queue(name, { connection, prefix });
      try {
        const c = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(c).reduce((a, b) => a + b, 0);
      } finally {
        await q.close();
      }
    }),
  );
  return [counts[0] ?? -1, counts[1] ?? -1];
}

/**
 * Hands the job of `event` on `queue` to consumers that take it and die with it: a bare BullMQ
 * worker whose processor never returns and whose locks (300 ms, never renewed) expire, until
 * the job was delivered 3 times. Resolves with the deliveries it had once they stopped.
 */
async function crashThrice(queue: string, event: Envelope): Promise<number> {
  const crashConnection = connection.duplicate();
  const crashing = new Worker(queue, () => new Promise<void>(() => {}), {
    connection: crashConnection,
    prefix,
    concurrency: 5,
    lockDuration: 300,
    skipLockRenewal: true,
    stalledInterval: 100,
    maxStalledCount: 100,
  });
  const work = new Queue(queue, { connection, prefix });
  const started = async () =>
    (await work.getJob(jobIdOf(`${event.source}:${event.id}`)))?.attemptsStarted ?? 0;
  try {
    await waitUntil(async () => (await started()) >= 3, {
      timeoutMs: 10_000,
      intervalMs: 20,
      message: 'three crashed deliveries',
    });
    await crashing.close(true);
    return await started();
  } finally {
    await crashing.close(true);
    crashConnection.disconnect();
    await work.close();
  }
}

describe('a worker on bullmq', () => {
  it('records a handler that keeps failing as a dead letter and leaves nothing on the broker', async () => {
    const queue = freshQueue();
    const transport = createBullmqTransport({ url, prefix, queue, lockMs: 5_000 });
    const records = createMemoryStore();
    const event = testEnvelope();
    let runs = 0;
    const worker = createWorker({
      transport,
      records,
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 },
      handlers: [
        defineHandler({
          type: event.type,
          async handle() {
            runs++;
            throw new Error('always');
          },
        }),
      ],
    });
    try {
      await worker.start();
      await transport.publish([{ envelope: event }]);
      await waitUntil(
        async () => (await records.get(event.source, event.id))?.state === 'dead-lettered',
        { timeoutMs: 10_000, message: 'dead-lettered in the record' },
      );
      expect(runs).toBe(3);
      await waitUntil(async () => (await pending(queue)).join() === '0,0', {
        timeoutMs: 5_000,
        message: 'nothing left to deliver on the work and dead-letter queues',
      });
    } finally {
      await worker.close();
      await transport.close();
    }
  }, 30_000);

  it('records a job whose consumers crashed deliveryLimit times, from the dead-letter queue, without running the handler', async () => {
    // The crash loop is judged only when its consumers stopped at exactly three deliveries: a
    // stall of this process between the third fetch and their close may rightly let the 300 ms
    // lock of the third run out and a fourth delivery start. Such a run is run again, on a fresh
    // queue, before the transport under test ever sees the job.
    for (let run = 1; ; run++) {
      const queue = freshQueue();
      const transport = createBullmqTransport({
        url,
        prefix,
        queue,
        lockMs: 2_000,
        deliveryLimit: 3,
        stalledIntervalMs: 100,
      });
      const event = testEnvelope();
      await transport.publish([{ envelope: event }]);
      const started = await crashThrice(queue, event);
      if (started !== 3 && run < 5) {
        await transport.close();
        continue;
      }
      expect(started, 'deliveries the crashed consumers had when they stopped').toBe(3);

      const records = createMemoryStore();
      let runs = 0;
      const worker = createWorker({
        transport,
        records,
        retry: { maxAttempts: 2 },
        handlers: [
          defineHandler({
            type: event.type,
            async handle() {
              runs++;
            },
          }),
        ],
      });
      try {
        await worker.start();
        await waitUntil(
          async () => (await records.get(event.source, event.id))?.state === 'dead-lettered',
          { timeoutMs: 10_000, message: 'dead-lettered in the record' },
        );
        const record = await records.get(event.source, event.id);
        expect(record?.attempts).toBe(3);
        expect(record?.history.at(-1)?.note).toBe('broker dead-letter');
        expect(runs, 'the handler never ran past the limit').toBe(0);
        await waitUntil(async () => (await pending(queue)).join() === '0,0', {
          timeoutMs: 5_000,
          message: 'nothing left to deliver on the work and dead-letter queues',
        });
      } finally {
        await worker.close();
        await transport.close();
      }
      return;
    }
  }, 60_000);
});
