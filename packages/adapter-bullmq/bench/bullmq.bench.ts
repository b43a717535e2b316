/**
 * Publish and end-to-end consume throughput of the BullMQ transport beside the raw BullMQ client
 * doing the same work, on the shared Redis (`ONCEFLOW_REDIS_URL` overrides). Prints; never fails.
 *
 * - publish: `transport.publish` vs `Queue.addBulk` with the same encoded bodies and job ids,
 *   both in batches of 50 with 4 batches in flight, each on a connection opened for the round;
 * - consume: `createWorker` with the record guard (memory store) and a no-op handler vs a raw
 *   BullMQ `Worker` whose processor decodes the envelope and returns (BullMQ completes the job),
 *   and the same raw `Worker` taking and completing each event's record in a memory record store
 *   first, as the worker's guard does (`begin` then `complete`, the same store type as ours);
 *   all at concurrency 32 on a pre-filled queue. The consume rows also print this process's CPU
 *   and heap allocation per job on each side (BullMQ's scripts run in Redis, on neither).
 */
import { randomBytes } from 'node:crypto';
import {
  benchEnvelopes,
  interleaved,
  measure,
  printComparisons,
  printCosts,
  publishAll,
  consumeWithWorker,
  rawRecordGuard,
  type Measured,
} from '@onceflow/conformance/bench';
import type { Envelope } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { decodeEnvelope, encodeEnvelope } from '@onceflow/core/kit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqTransport, deleteBullmqQueue, jobIdOf } from '../src/index.js';

const url = process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `onceflow-bench-${randomBytes(3).toString('hex')}`;
// Rounds long enough for steady state: at 4,000 jobs a consume round lasted 0.2–0.6 s and the
// worker's code was still being optimised through the median round (docs/performance.md).
const COUNT = Number(process.env.BENCH_COUNT ?? 20_000);
const ROUNDS = 3;
const BATCH = 50;
const IN_FLIGHT = 4;
const CONCURRENCY = 32;
const keep = { age: 3600 };

let queues = 0;
const freshQueue = () => `bench-${++queues}`;
const used: string[] = [];
const connection = new Redis(url, { maxRetriesPerRequest: null });

function rawJobs(envelopes: readonly Envelope[]) {
  return envelopes.map((e) => ({
    name: e.type,
    data: encodeEnvelope(e),
    opts: { jobId: jobIdOf(`${e.source}:${e.id}`), removeOnComplete: keep, removeOnFail: keep },
  }));
}

async function rawPublish(queue: Queue, envelopes: readonly Envelope[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < envelopes.length) {
      const slice = envelopes.slice(next, next + BATCH);
      next += BATCH;
      await queue.addBulk(rawJobs(slice));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

async function withQueue<T>(run: (name: string, queue: Queue) => Promise<T>): Promise<T> {
  const name = freshQueue();
  used.push(name);
  const queue = new Queue(name, { connection, prefix });
  try {
    return await run(name, queue);
  } finally {
    await queue.close();
  }
}

const publishOurs = () =>
  withQueue(async (name) => {
    const transport = createBullmqTransport({ url, prefix, queue: name });
    await transport.start();
    const envelopes = benchEnvelopes(COUNT);
    try {
      return await measure('publish ours', COUNT, () =>
        publishAll(transport, envelopes, BATCH, IN_FLIGHT),
      );
    } finally {
      await transport.close();
    }
  });

// Each side on a connection of its own, opened for the round with the options the transport's
// publisher uses: the shared connection, warm from every earlier round, made the raw side's
// first batches cheaper than the transport's (docs/performance.md, "Publishing").
const publishRaw = async () => {
  const own = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const name = freshQueue();
  used.push(name);
  const queue = new Queue(name, { connection: own, prefix });
  try {
    await queue.waitUntilReady();
    const envelopes = benchEnvelopes(COUNT);
    return await measure('publish raw', COUNT, () => rawPublish(queue, envelopes));
  } finally {
    await queue.close();
    await own.quit();
  }
};

const consumeOurs = () =>
  withQueue(async (name, queue) => {
    await rawPublish(queue, benchEnvelopes(COUNT));
    const transport = createBullmqTransport({ url, prefix, queue: name });
    await transport.start();
    try {
      return await consumeWithWorker({
        label: 'consume ours',
        transport,
        records: createMemoryStore(),
        count: COUNT,
        concurrency: CONCURRENCY,
      });
    } finally {
      await transport.close();
    }
  });

const consumeRaw = (guarded: boolean) => () =>
  withQueue(async (name, queue) => {
    const guard = rawRecordGuard(createMemoryStore());
    await rawPublish(queue, benchEnvelopes(COUNT));
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    let worker: Worker | undefined;
    const label = guarded ? 'consume raw, record store' : 'consume raw';
    const result: Measured = await measure(label, COUNT, async () => {
      worker = new Worker(
        name,
        async (job) => {
          const envelope = decodeEnvelope(job.data as string);
          if (guarded) await guard(envelope);
          if (++handled === COUNT) done();
        },
        { connection, prefix, concurrency: CONCURRENCY },
      );
      await finished;
    });
    await worker?.close();
    return result;
  });

async function main(): Promise<void> {
  console.log(`BullMQ bench: ${COUNT} events of ~700 B, ${ROUNDS} interleaved rounds, ${url}`);
  const [pubOurs, pubRaw] = await interleaved(ROUNDS, [publishOurs, publishRaw]);
  const [conOurs, conRaw, conRawGuarded] = await interleaved(ROUNDS, [
    consumeOurs,
    consumeRaw(false),
    consumeRaw(true),
  ]);
  if (!pubOurs || !pubRaw || !conOurs || !conRaw || !conRawGuarded)
    throw new Error('bench: missing results');
  printComparisons('BullMQ transport vs raw bullmq client', [
    {
      name: `publish (batches of ${BATCH}, ${IN_FLIGHT} in flight)`,
      ours: pubOurs,
      raw: pubRaw,
      aim: 0.95,
    },
    { name: `consume (worker + guard, c=${CONCURRENCY})`, ours: conOurs, raw: conRaw, aim: 0.8 },
    { name: 'consume vs raw + record store', ours: conOurs, raw: conRawGuarded, aim: 0.8 },
  ]);
  printCosts('Consume: this process per job (medians of the rounds; ratios to the first row)', [
    conRawGuarded,
    conRaw,
    conOurs,
  ]);
}

try {
  await main();
} finally {
  for (const queue of used) await deleteBullmqQueue({ url, prefix, queue });
  await connection.quit();
}
