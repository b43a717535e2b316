/**
 * onceflow on RabbitMQ beside its closest peer, message-queue-toolkit (`@message-queue-toolkit/amqp`
 * as published), and amqplib alone, in one run: the same broker, the same quorum queue type, the
 * same payload (benchEnvelopes, ~700 B) and the same concurrency where the peer has a knob for it.
 *
 * What each side guarantees differs, and the table says so:
 * - onceflow publishes persistent messages on a confirm channel and resolves once the broker
 *   confirmed; message-queue-toolkit's `publish()` returns before anything is sent (a plain channel,
 *   `sendToQueue`, no publisher confirms, not persistent unless the caller says so). Its channel is
 *   created inside the library, so confirms cannot be switched on from outside: its rows are shown
 *   as shipped, timed until the broker holds every message, beside amqplib doing the same
 *   fire-and-forget (and beside amqplib with confirms, what onceflow is held to).
 * - onceflow consumes through the worker with the event record's guard (memory store) and
 *   `concurrency` handlers; message-queue-toolkit validates with zod and sets no prefetch (the broker
 *   pushes the whole queue at once), so it gets the raw loop's unbounded twin beside it.
 *
 * Interleaved rounds, medians; prints, never fails on a time. `pnpm bench` (root or here);
 * $ONCEFLOW_AMQP_URL, else loopback.
 */
import { AmqpConsumerErrorResolver, AmqpConnectionManager } from '@message-queue-toolkit/amqp';
import {
  benchEnvelopes,
  consumeWithWorker,
  interleaved,
  type Measured,
  measure,
  printComparisons,
  publishAll,
} from '@onceflow/conformance/bench';
import {
  createRabbitMqTransport,
  defaultAmqpUrl,
  deleteRabbitMqQueues,
} from '@onceflow/adapter-rabbitmq';
import type { Envelope } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import amqp from 'amqplib';
import { pino } from 'pino';
import { createPeerConsumer, createPeerPublisher, type PeerDependencies } from './amqp-peer.js';
import { peerMessage } from './peer-message.js';

const PUBLISH = Number(process.env.BENCH_PUBLISH ?? 4_000);
const CONSUME = Number(process.env.BENCH_CONSUME ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 32;
const QUORUM = { 'x-queue-type': 'quorum' };

const url = new URL(defaultAmqpUrl());
const run = Date.now().toString(36);
const queues = {
  ours: `onceflow-peer-${run}`,
  peer: `onceflow-peer-mqt-${run}`,
  raw: `onceflow-peer-raw-${run}`,
};

const transport = createRabbitMqTransport({
  queue: queues.ours,
  publishTimeoutMs: 60_000, // the bench measures throughput on a loaded machine, not the deadline
});
await transport.start();
const conn = await amqp.connect(url.href);
const confirm = await conn.createConfirmChannel();
const plain = await conn.createChannel();
await confirm.assertQueue(queues.raw, { durable: true, arguments: QUORUM });

const noop = () => {};
const logger = pino({ level: 'silent' });
const connectionManager = new AmqpConnectionManager(
  {
    hostname: url.hostname,
    port: Number(url.port || 5672),
    username: decodeURIComponent(url.username || 'guest'),
    password: decodeURIComponent(url.password || 'guest'),
    vhost: url.pathname.slice(1),
    useTls: url.protocol === 'amqps:',
  },
  logger,
);
await connectionManager.init();
const deps: PeerDependencies = {
  amqpConnectionManager: connectionManager,
  logger,
  errorReporter: { report: noop },
  consumerErrorResolver: new AmqpConsumerErrorResolver(),
  transactionObservabilityManager: {
    start: noop,
    startWithGroup: noop,
    stop: noop,
    addCustomAttributes: noop,
  },
};
const publisher = createPeerPublisher(deps, queues.peer, QUORUM);
await publisher.init();

/** Waits until `queue` holds `count` messages (what a fire-and-forget publish is timed to). */
async function heldByBroker(queue: string, count: number): Promise<void> {
  for (;;) {
    const { messageCount } = await plain.checkQueue(queue);
    if (messageCount >= count) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** amqplib alone with confirms: `CONCURRENCY` single publishes in flight, each awaited. */
async function rawConfirmed(envelopes: readonly Envelope[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < envelopes.length) {
      const e = envelopes[next++] as Envelope;
      await new Promise<void>((resolve, reject) =>
        confirm.sendToQueue(
          queues.raw,
          Buffer.from(JSON.stringify(peerMessage(e))),
          { persistent: true },
          (err) => (err ? reject(err) : resolve()),
        ),
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

/** amqplib alone, fire-and-forget like the peer: plain channel, timed until the broker holds all. */
async function rawUnconfirmed(envelopes: readonly Envelope[]): Promise<void> {
  for (const e of envelopes)
    plain.sendToQueue(queues.raw, Buffer.from(JSON.stringify(peerMessage(e))));
  await heldByBroker(queues.raw, envelopes.length);
}

async function peerPublish(envelopes: readonly Envelope[]): Promise<void> {
  for (const e of envelopes) publisher.publish(peerMessage(e));
  await heldByBroker(queues.peer, envelopes.length);
}

/** amqplib alone: consume `count` with the given prefetch (0: unbounded) and ack each. */
async function rawConsume(count: number, prefetch: number): Promise<void> {
  const c = await conn.createChannel();
  if (prefetch > 0) await c.prefetch(prefetch);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void c.consume(queues.raw, (msg) => {
      if (!msg) return;
      c.ack(msg);
      if (++seen === count) resolve();
    });
  });
  await c.close();
}

async function peerConsume(count: number): Promise<void> {
  let done!: () => void;
  const finished = new Promise<void>((r) => {
    done = r;
  });
  let seen = 0;
  const consumer = createPeerConsumer(deps, queues.peer, QUORUM, () => {
    if (++seen === count) done();
  });
  await consumer.start();
  await finished;
  // The peer acks after its handler's promise settles: let the last ack go out before closing.
  await new Promise((r) => setImmediate(r));
  await consumer.close();
}

const purge = async () => {
  for (const q of Object.values(queues)) await plain.purgeQueue(q).catch(() => undefined);
};

const publishRows = await interleaved(ROUNDS, [
  () =>
    measure('onceflow publish', PUBLISH, () =>
      publishAll(transport, benchEnvelopes(PUBLISH), 1, CONCURRENCY),
    ),
  () => measure('amqplib confirmed', PUBLISH, () => rawConfirmed(benchEnvelopes(PUBLISH))),
  async () => {
    await purge();
    return measure('message-queue-toolkit publish', PUBLISH, () =>
      peerPublish(benchEnvelopes(PUBLISH)),
    );
  },
  async () => {
    await purge();
    return measure('amqplib fire-and-forget', PUBLISH, () =>
      rawUnconfirmed(benchEnvelopes(PUBLISH)),
    );
  },
]);
await purge();

const preload = async (queue: string, envelopes: readonly Envelope[]) => {
  for (const e of envelopes)
    confirm.sendToQueue(queue, Buffer.from(JSON.stringify(peerMessage(e))), { persistent: true });
  await confirm.waitForConfirms();
};

const consumeRows = await interleaved(ROUNDS, [
  async () => {
    await publishAll(transport, benchEnvelopes(CONSUME), 100, 8);
    return consumeWithWorker({
      label: 'onceflow worker + guard',
      transport,
      records: createMemoryStore(),
      count: CONSUME,
      concurrency: CONCURRENCY,
    });
  },
  async () => {
    await preload(queues.raw, benchEnvelopes(CONSUME));
    return measure('amqplib prefetch 32', CONSUME, () => rawConsume(CONSUME, CONCURRENCY));
  },
  async () => {
    await preload(queues.peer, benchEnvelopes(CONSUME));
    return measure('message-queue-toolkit consume', CONSUME, () => peerConsume(CONSUME));
  },
  async () => {
    await preload(queues.raw, benchEnvelopes(CONSUME));
    return measure('amqplib no prefetch limit', CONSUME, () => rawConsume(CONSUME, 0));
  },
]);

const [oursPub, rawPub, peerPub, rawFire] = publishRows as [Measured, Measured, Measured, Measured];
const [oursCon, rawCon, peerCon, rawUnbounded] = consumeRows as [
  Measured,
  Measured,
  Measured,
  Measured,
];
printComparisons(
  `RabbitMQ, onceflow vs message-queue-toolkit 23.1 (quorum queues, ${CONCURRENCY} concurrent, median of ${ROUNDS} rounds)`,
  [
    {
      name: 'onceflow publish (confirmed) vs amqplib confirmed',
      ours: oursPub,
      raw: rawPub,
      aim: 0.95,
    },
    {
      name: 'onceflow publish (confirmed) vs peer (no confirms)',
      ours: oursPub,
      raw: peerPub,
      aim: 1,
    },
    { name: 'peer publish vs amqplib fire-and-forget', ours: peerPub, raw: rawFire, aim: 0.8 },
    {
      name: 'onceflow consume (guard) vs amqplib prefetch 32',
      ours: oursCon,
      raw: rawCon,
      aim: 0.8,
    },
    { name: 'onceflow consume (guard) vs peer consume', ours: oursCon, raw: peerCon, aim: 1 },
    {
      name: 'peer consume vs amqplib no prefetch limit',
      ours: peerCon,
      raw: rawUnbounded,
      aim: 0.8,
    },
  ],
);

await publisher.close();
await connectionManager.close();
await transport.close();
await conn.close();
for (const queue of Object.values(queues)) await deleteRabbitMqQueues({ queue });
