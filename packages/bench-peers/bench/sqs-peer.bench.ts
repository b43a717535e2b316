/**
 * onceflow on SQS (ElasticMQ here) beside its closest peer, message-queue-toolkit
 * (`@message-queue-toolkit/sqs` as published), and @aws-sdk/client-sqs alone, in one run: standard
 * queues on both sides (the peer's default), the same payload (benchEnvelopes, ~700 B), 32 single
 * publishes in flight on every side.
 *
 * - Publish: onceflow's `publish` of one message and the peer's `publish` both await the
 *   broker's answer to `SendMessage`; raw is `SendMessage` itself.
 * - Consume: onceflow through the worker with the event record's guard (memory store), 32
 *   handlers; the peer as shipped (sqs-consumer's defaults: one poller, one message per receive)
 *   and tuned (10 per receive, 4 pollers); raw is 4 receive loops of 10 with batched deletes,
 *   and the same loops taking and completing each event's record in a memory record store first,
 *   as the worker's guard does (`rawRecordGuard`: the "+ records" row).
 * - The peer with its defaults takes one message per receive from one poller, tens of times
 *   slower than the others: it is given fewer events (BENCH_CONSUME_PEER_DEFAULTS, default 300)
 *   and at most BENCH_PEER_DEFAULTS_CAP_MS (default 15 s) per round, whichever ends first, so the
 *   whole bench stays within a few minutes. Every row compares rates (events/s over what each
 *   side consumed in its round); the table says how many the capped side consumed.
 *
 * Interleaved rounds, medians; prints, never fails on a time. `pnpm bench`;
 * $ONCEFLOW_SQS_ENDPOINT, else ElasticMQ on loopback.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { SqsConsumerErrorResolver } from '@message-queue-toolkit/sqs';
import { createSqsTransport, deleteSqsQueues } from '@onceflow/adapter-sqs';
import {
  benchEnvelopes,
  consumeWithWorker,
  interleaved,
  type Measured,
  measure,
  printComparisons,
  publishAll,
  rawRecordGuard,
} from '@onceflow/conformance/bench';
import type { Envelope } from '@onceflow/core';
import { decodeEnvelope, encodeEnvelope } from '@onceflow/core/kit';
import { createMemoryStore } from '@onceflow/core/testing';
import { pino } from 'pino';
import { peerMessage } from './peer-message.js';
import {
  createSqsPeerConsumer,
  createSqsPeerPublisher,
  type SqsPeerDependencies,
} from './sqs-peer.js';

// The SDK's documented switch for its Node 20 support notice (aws/aws-sdk-js-v3#7983): bench output only.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const PUBLISH = Number(process.env.BENCH_PUBLISH ?? 2_000);
const CONSUME = Number(process.env.BENCH_CONSUME ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PEER_DEFAULTS_CONSUME = Number(
  process.env.BENCH_CONSUME_PEER_DEFAULTS ?? Math.min(CONSUME, 300),
);
const PEER_DEFAULTS_CAP_MS = Number(process.env.BENCH_PEER_DEFAULTS_CAP_MS ?? 15_000);
const CONCURRENCY = 32;
const LOOPS = 4;

const endpoint = process.env.ONCEFLOW_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
const client = new SQSClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'onceflow', secretAccessKey: 'onceflow' },
});
const run = Date.now().toString(36);
// The publish rounds and the consume rounds use queues of their own (and the peer with its
// defaults one more), so nothing left by one round is read by another and no queue is purged
// between rounds (ElasticMQ could then hold back what the next round sent).
const names = {
  ours: `onceflow-peer-${run}`,
  oursPublish: `onceflow-peer-pub-${run}`,
  peer: `onceflow-peer-mqt-${run}`,
  peerPublish: `onceflow-peer-mqt-pub-${run}`,
  peerDefaults: `onceflow-peer-mqt-defaults-${run}`,
  raw: `onceflow-peer-raw-${run}`,
  rawRecords: `onceflow-peer-raw-records-${run}`,
  rawPublish: `onceflow-peer-raw-pub-${run}`,
};

const transportOn = (queue: string) =>
  createSqsTransport({
    queue,
    fifo: false,
    client,
    waitTimeSeconds: 1,
    publishTimeoutMs: 60_000, // the bench measures throughput on a loaded machine, not the deadline
  });
const transport = transportOn(names.ours);
const publishTransport = transportOn(names.oursPublish);
await transport.start();
await publishTransport.start();
const noop = () => {};
const deps: SqsPeerDependencies = {
  sqsClient: client,
  logger: pino({ level: 'silent' }),
  errorReporter: { report: noop },
  consumerErrorResolver: new SqsConsumerErrorResolver(),
  transactionObservabilityManager: {
    start: noop,
    startWithGroup: noop,
    stop: noop,
    addCustomAttributes: noop,
  },
};
// The peer's queue set-up asks GetQueueUrl first and stops on ElasticMQ's QueueDoesNotExist:
// the bench creates both queues itself (standard queues, the server's defaults).
const plainQueues = [
  names.peer,
  names.peerPublish,
  names.peerDefaults,
  names.raw,
  names.rawRecords,
  names.rawPublish,
];
for (const QueueName of plainQueues) await client.send(new CreateQueueCommand({ QueueName }));
const publisher = createSqsPeerPublisher(deps, names.peerPublish);
await publisher.init();
const urlOf = async (QueueName: string) =>
  (await client.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl as string;
const urls = {
  peer: await urlOf(names.peer),
  peerDefaults: await urlOf(names.peerDefaults),
  raw: await urlOf(names.raw),
  rawRecords: await urlOf(names.rawRecords),
  rawPublish: await urlOf(names.rawPublish),
};

const body = (e: Envelope) => JSON.stringify(peerMessage(e));

/** Runs `each` over `items` with `CONCURRENCY` calls in flight. */
async function pooled<T>(items: readonly T[], each: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++] as T);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

const rawSend = (e: Envelope, url = urls.raw) =>
  client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body(e) }));

/**
 * Receive loops of 10 with batched deletes until `count` were deleted; with `guard`, each body is
 * decoded as an envelope and its record taken and completed before the batch is deleted.
 */
async function rawConsume(
  count: number,
  url = urls.raw,
  guard?: (envelope: Envelope) => Promise<void>,
): Promise<void> {
  let deleted = 0;
  let reached!: () => void;
  const done = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const loop = async () => {
    while (deleted < count) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      if (Messages.length === 0) continue;
      if (guard) for (const m of Messages) await guard(decodeEnvelope(m.Body ?? ''));
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: Messages.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle as string,
          })),
        }),
      );
      deleted += Messages.length;
      if (deleted >= count) reached();
    }
  };
  // Timed until the last delete, as the worker side is timed until its last handler: loops still
  // in a long poll on the empty queue end afterwards, before the next round (rawLoops).
  rawLoops = Promise.all(Array.from({ length: LOOPS }, loop)).then(() => {});
  await Promise.race([done, rawLoops]);
}
let rawLoops: Promise<void> = Promise.resolve();

/**
 * Consumes through the peer until `count` were handled or `capMs` passed, and returns how many
 * were handled (what the cap leaves stays on the queue).
 */
async function peerConsume(
  count: number,
  tuned?: { consumers: number },
  capMs = Number.POSITIVE_INFINITY,
  queue = names.peer,
): Promise<number> {
  let done!: () => void;
  const finished = new Promise<void>((r) => {
    done = r;
  });
  let seen = 0;
  const consumer = createSqsPeerConsumer(
    deps,
    queue,
    () => {
      if (++seen === count) done();
    },
    tuned,
  );
  await consumer.start();
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(capMs)) timer = setTimeout(done, capMs);
  await finished;
  clearTimeout(timer);
  const handled = Math.min(seen, count);
  await new Promise((r) => setTimeout(r, 50)); // the peer deletes after its handler resolves
  await consumer.close();
  return handled;
}

/** `measure` for a run that may stop early: the rate is over what it did in the time it took. */
async function measureUpTo(label: string, run: () => Promise<number>): Promise<Measured> {
  const t0 = performance.now();
  const count = await run();
  const ms = performance.now() - t0;
  return { label, count, ms, perSecond: (count / ms) * 1000 };
}

const publishRows = await interleaved(ROUNDS, [
  () =>
    measure('onceflow publish', PUBLISH, () =>
      publishAll(publishTransport, benchEnvelopes(PUBLISH), 1, CONCURRENCY),
    ),
  () =>
    measure('peer publish', PUBLISH, () =>
      pooled(benchEnvelopes(PUBLISH), (e) => publisher.publish(peerMessage(e))),
    ),
  () =>
    measure('SendMessage', PUBLISH, () =>
      pooled(benchEnvelopes(PUBLISH), (e) => rawSend(e, urls.rawPublish)),
    ),
]);

const consumeRows = await interleaved(ROUNDS, [
  async () => {
    await publishAll(transport, benchEnvelopes(CONSUME), 10, 8);
    return consumeWithWorker({
      label: 'onceflow worker + guard',
      transport,
      records: createMemoryStore(),
      count: CONSUME,
      concurrency: CONCURRENCY,
    });
  },
  async () => {
    await pooled(benchEnvelopes(PEER_DEFAULTS_CONSUME), (e) => rawSend(e, urls.peerDefaults));
    // What the cap leaves stays on this queue of its own; the next round reads what is left first.
    return measureUpTo('peer consume (defaults)', () =>
      peerConsume(PEER_DEFAULTS_CONSUME, undefined, PEER_DEFAULTS_CAP_MS, names.peerDefaults),
    );
  },
  async () => {
    await pooled(benchEnvelopes(CONSUME), (e) => rawSend(e, urls.peer));
    return measureUpTo('peer consume (tuned)', () => peerConsume(CONSUME, { consumers: LOOPS }));
  },
  async () => {
    await pooled(benchEnvelopes(CONSUME), (e) => rawSend(e));
    const measured = await measure('receive + delete', CONSUME, () => rawConsume(CONSUME));
    await rawLoops;
    return measured;
  },
  async () => {
    await pooled(benchEnvelopes(CONSUME), (e) =>
      client.send(
        new SendMessageCommand({ QueueUrl: urls.rawRecords, MessageBody: encodeEnvelope(e) }),
      ),
    );
    const guard = rawRecordGuard(createMemoryStore());
    const measured = await measure('receive + delete, records', CONSUME, () =>
      rawConsume(CONSUME, urls.rawRecords, guard),
    );
    await rawLoops;
    return measured;
  },
]);

const [oursPub, peerPub, rawPub] = publishRows as [Measured, Measured, Measured];
const [oursCon, peerDefault, peerTuned, rawCon, rawConRecords] = consumeRows as [
  Measured,
  Measured,
  Measured,
  Measured,
  Measured,
];
console.log(
  `\nmessage-queue-toolkit consume with its defaults (one poller, one message per receive) is given ${PEER_DEFAULTS_CONSUME} events and at most ${PEER_DEFAULTS_CAP_MS / 1000} s per round (the median round consumed ${peerDefault.count} in ${(peerDefault.ms / 1000).toFixed(1)} s); every other consume side ${CONSUME}. Rows compare events/s.`,
);
printComparisons(
  `SQS at ${endpoint}, onceflow vs message-queue-toolkit sqs 24.2 (standard queues, ${CONCURRENCY} in flight, median of ${ROUNDS} rounds)`,
  [
    { name: 'onceflow publish vs SendMessage', ours: oursPub, raw: rawPub, aim: 0.95 },
    { name: 'onceflow publish vs peer publish', ours: oursPub, raw: peerPub, aim: 1 },
    { name: 'peer publish vs SendMessage', ours: peerPub, raw: rawPub, aim: 0.95 },
    { name: 'onceflow consume (guard) vs receive + delete', ours: oursCon, raw: rawCon, aim: 0.8 },
    {
      name: 'onceflow consume (guard) vs receive + delete + records',
      ours: oursCon,
      raw: rawConRecords,
      aim: 0.8,
    },
    { name: 'onceflow consume vs peer (defaults)', ours: oursCon, raw: peerDefault, aim: 1 },
    { name: 'onceflow consume vs peer (tuned)', ours: oursCon, raw: peerTuned, aim: 1 },
    { name: 'peer (tuned) vs receive + delete', ours: peerTuned, raw: rawCon, aim: 0.8 },
  ],
);

await publisher.close();
await transport.close();
await publishTransport.close();
for (const queue of [names.ours, names.oursPublish])
  await deleteSqsQueues(client, { queue, fifo: false });
for (const QueueName of plainQueues)
  await client.send(new DeleteQueueCommand({ QueueUrl: await urlOf(QueueName) }));
client.destroy();
