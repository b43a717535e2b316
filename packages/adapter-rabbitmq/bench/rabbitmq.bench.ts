/**
 * Publish and consume throughput of the RabbitMQ transport beside amqplib doing the same work:
 * a confirm channel with the same in-flight window (one call of 4000 messages), the same 32
 * concurrent single-message publishes each awaiting its confirm (the receiver's pattern), and a
 * bare consume-and-ack loop. Both sides send the same bytes (body, properties, headers), persistent
 * and `mandatory`, to a quorum queue. Prints a table; never fails on a time. `pnpm bench` in this
 * package ($ONCEFLOW_AMQP_URL, else loopback).
 */
import {
  benchEnvelopes,
  consumeWithWorker,
  interleaved,
  measure,
  printComparisons,
  publishAll,
} from '@onceflow/conformance/bench';
import { createMemoryStore } from '@onceflow/core/testing';
import type { Envelope } from '@onceflow/core';
import amqp from 'amqplib';
import { createRabbitMqTransport, defaultAmqpUrl, deleteRabbitMqQueues } from '../src/index.js';
import { toWorkMessage } from '../src/marshal.js';

const PUBLISH = 4_000;
const CONSUME = 3_000;
const ROUNDS = 3;
const WINDOW = 1_024; // the transport's default maxUnconfirmed
const CONCURRENCY = 32;
/** Concurrent single-message publishes, each awaiting its confirm before the next. */
const CALLERS = 32;

const run = Date.now().toString(36);
const oursQueue = `onceflow-bench-${run}`;
const rawQueue = `onceflow-bench-raw-${run}`;
// One call of PUBLISH messages is not a receiver's publish: a loaded machine may take longer
// than the default 500 ms deadline for it, and the deadline's cost does not depend on its length.
const transport = createRabbitMqTransport({
  queue: oursQueue,
  maxUnconfirmed: WINDOW,
  publishTimeoutMs: 30_000,
});
await transport.start();
const conn = await amqp.connect(defaultAmqpUrl());
const ch = await conn.createConfirmChannel();
await ch.assertQueue(rawQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });

/** amqplib alone: the same bytes (body, properties, headers), at most WINDOW unconfirmed, confirms pipelined. */
async function rawPublish(envelopes: readonly Envelope[], queue: string): Promise<void> {
  let unconfirmed = 0;
  let wake: (() => void) | undefined;
  const confirms: Promise<void>[] = [];
  for (const e of envelopes) {
    while (unconfirmed >= WINDOW) await new Promise<void>((r) => (wake = r));
    unconfirmed++;
    const m = toWorkMessage(
      queue,
      { envelope: e, dedupeKey: `${e.source}:${e.id}`, attempt: 1 },
      1 << 30,
    );
    confirms.push(
      new Promise<void>((resolve, reject) =>
        ch.publish('', queue, m.body, { ...m.options, mandatory: true }, (err) => {
          unconfirmed--;
          wake?.();
          if (err) reject(err);
          else resolve();
        }),
      ),
    );
  }
  await Promise.all(confirms);
}

/** `publish` of one message at a time on CALLERS concurrent lanes, until `envelopes` are sent. */
async function onLanes(
  envelopes: readonly Envelope[],
  publishOne: (e: Envelope) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let e = envelopes[next++]; e !== undefined; e = envelopes[next++]) await publishOne(e);
  };
  await Promise.all(Array.from({ length: CALLERS }, lane));
}

/** amqplib alone: one message, the same bytes as the transport's, resolved on its confirm. */
function rawPublishOne(e: Envelope, queue: string): Promise<void> {
  const m = toWorkMessage(
    queue,
    { envelope: e, dedupeKey: `${e.source}:${e.id}`, attempt: 1 },
    1 << 30,
  );
  return new Promise<void>((resolve, reject) =>
    ch.publish('', queue, m.body, { ...m.options, mandatory: true }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
}

/** amqplib alone: consume `count` messages with prefetch = CONCURRENCY and ack each. */
async function rawConsume(count: number): Promise<void> {
  const c = await conn.createChannel();
  await c.prefetch(CONCURRENCY);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void c.consume(rawQueue, (msg) => {
      if (!msg) return;
      c.ack(msg);
      if (++seen === count) resolve();
    });
  });
  await c.close();
}

const publishRows = await interleaved(ROUNDS, [
  () =>
    measure('onceflow publish', PUBLISH, () =>
      publishAll(transport, benchEnvelopes(PUBLISH), PUBLISH, 1),
    ),
  () => measure('amqplib publish', PUBLISH, () => rawPublish(benchEnvelopes(PUBLISH), rawQueue)),
]);
const purge = await conn.createChannel();
await ch.purgeQueue(rawQueue);
await purge.purgeQueue(oursQueue);

const singleRows = await interleaved(ROUNDS, [
  () =>
    measure('onceflow publish, single calls', PUBLISH, () =>
      onLanes(benchEnvelopes(PUBLISH), (envelope) => transport.publish([{ envelope }])),
    ),
  () =>
    measure('amqplib publish, single calls', PUBLISH, () =>
      onLanes(benchEnvelopes(PUBLISH), (e) => rawPublishOne(e, rawQueue)),
    ),
]);
await ch.purgeQueue(rawQueue);
await purge.purgeQueue(oursQueue);

const consumeRows = await interleaved(ROUNDS, [
  async () => {
    await publishAll(transport, benchEnvelopes(CONSUME), 100, 8);
    return consumeWithWorker({
      label: 'onceflow worker consume',
      transport,
      records: createMemoryStore(),
      count: CONSUME,
      concurrency: CONCURRENCY,
    });
  },
  async () => {
    await rawPublish(benchEnvelopes(CONSUME), rawQueue);
    return measure('amqplib consume+ack', CONSUME, () => rawConsume(CONSUME));
  },
]);

const [oursPub, rawPub] = publishRows as [
  (typeof publishRows)[0] & {},
  (typeof publishRows)[0] & {},
];
const [oursOne, rawOne] = singleRows as [(typeof singleRows)[0] & {}, (typeof singleRows)[0] & {}];
const [oursCon, rawCon] = consumeRows as [
  (typeof consumeRows)[0] & {},
  (typeof consumeRows)[0] & {},
];
printComparisons(
  `RabbitMQ ${defaultAmqpUrl().replace(/\/\/.*@/, '//')} (quorum queues, persistent, confirms; median of ${ROUNDS} rounds)`,
  [
    { name: `publish ${PUBLISH} (window ${WINDOW})`, ours: oursPub, raw: rawPub, aim: 0.95 },
    {
      name: `publish ${PUBLISH} (${CALLERS} concurrent single calls)`,
      ours: oursOne,
      raw: rawOne,
      aim: 0.95,
    },
    {
      name: `consume ${CONSUME} (concurrency ${CONCURRENCY})`,
      ours: oursCon,
      raw: rawCon,
      aim: 0.8,
    },
  ],
);

await transport.close();
await conn.close();
await deleteRabbitMqQueues({ queue: oursQueue });
await deleteRabbitMqQueues({ queue: rawQueue });
