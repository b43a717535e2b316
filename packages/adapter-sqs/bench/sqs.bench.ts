/**
 * Publish and consume throughput of the SQS transport beside @aws-sdk/client-sqs doing the same
 * work: `SendMessageBatch` with the same batch size and the same lanes, and bare receive-and-
 * delete loops (as many as the transport runs, holding no more messages than its concurrency). Consume runs on a FIFO queue with the workload's
 * 64 keys, on a FIFO queue where every message is its own group, and on a standard queue, so
 * per-group ordering's cost shows. Prints a table; never fails on a time. `pnpm bench` in this
 * package ($ONCEFLOW_SQS_ENDPOINT, else ElasticMQ on loopback).
 */
import { createHash } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import {
  benchEnvelopes,
  type Comparison,
  consumeWithWorker,
  interleaved,
  measure,
  printComparisons,
  publishAll,
} from '@onceflow/conformance/bench';
import { createMemoryStore } from '@onceflow/core/testing';
import type { Envelope } from '@onceflow/core';
import { encodeEnvelope } from '@onceflow/core/kit';
import { createSqsTransport, deleteSqsQueues, ensureSqsQueues } from '../src/index.js';
import { messageAttributes } from '../src/marshal.js';
import { assertSqsAnswers, endpoint, testClient } from '../test/sqs.js';

// The SDK's documented switch for its Node 20 support notice (aws/aws-sdk-js-v3#7983): bench output only.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const PUBLISH = 2_000;
const CONSUME = 2_000;
const ROUNDS = 3;
const BATCH = 10; // SendMessageBatch's maximum
const LANES = 8;
/** Worker concurrency ($ONCEFLOW_BENCH_CONCURRENCY, default 32). */
const CONCURRENCY = Number(process.env.ONCEFLOW_BENCH_CONCURRENCY ?? 32);
/** Receive loops of the raw side: as many as the transport runs (one per 10 of concurrency, up to 4). */
const LOOPS = Math.min(4, Math.ceil(CONCURRENCY / 10));
/**
 * Messages per raw receive: the raw loops hold at most as many messages at once as the worker
 * may (`CONCURRENCY`), as a fair baseline; 4 loops of 10 would hold 40 against the worker's 32.
 */
const RAW_RECEIVE = Math.min(10, Math.floor(CONCURRENCY / LOOPS));

const client = testClient();
await assertSqsAnswers(client);
const run = Date.now().toString(36);

/** Our transport and a raw queue, both FIFO or both standard, one-second long polls on both. */
async function openPair(fifo: boolean, tag: string) {
  const ours = `onceflow-bench-${tag}-${run}`;
  const raw = `onceflow-bench-raw-${tag}-${run}`;
  const transport = createSqsTransport({ queue: ours, client, fifo, waitTimeSeconds: 1 });
  await transport.start();
  const rawUrl = (await ensureSqsQueues(client, { queue: raw, fifo, deliveryLimit: 20 })).url;
  const oursUrl = transport.queues?.url ?? '';
  const purge = async () => {
    for (const url of [oursUrl, rawUrl])
      await client.send(new PurgeQueueCommand({ QueueUrl: url }));
  };
  const close = async () => {
    await transport.close();
    await deleteSqsQueues(client, { queue: ours, fifo });
    await deleteSqsQueues(client, { queue: raw, fifo });
  };
  return { fifo, transport, rawUrl, purge, close };
}
type Pair = Awaited<ReturnType<typeof openPair>>;

/**
 * The client alone: the same bodies, attributes, ids and groups as the transport sends (the
 * attributes carry the wire version, event id and dedupe key, which consumers read), in
 * SendMessageBatch of BATCH on LANES lanes.
 */
async function rawPublish(pair: Pair, envelopes: readonly Envelope[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < envelopes.length) {
      const slice = envelopes.slice(next, next + BATCH);
      next += BATCH;
      const entries = slice.map((e, i) => ({
        Id: String(i),
        MessageBody: encodeEnvelope(e),
        MessageAttributes: messageAttributes(e, `${e.source}:${e.id}`),
        ...(pair.fifo
          ? {
              MessageDeduplicationId: createHash('sha256')
                .update(`${e.source}:${e.id}`)
                .digest('hex'),
              MessageGroupId: e.key,
            }
          : {}),
      }));
      await client.send(new SendMessageBatchCommand({ QueueUrl: pair.rawUrl, Entries: entries }));
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
}

/** The client alone: LOOPS loops of receive (RAW_RECEIVE, long poll) and DeleteMessageBatch, until `count`. */
async function rawConsume(pair: Pair, count: number): Promise<void> {
  let seen = 0;
  const loop = async () => {
    while (seen < count) {
      const out = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: pair.rawUrl,
          MaxNumberOfMessages: RAW_RECEIVE,
          WaitTimeSeconds: 1,
          VisibilityTimeout: 30,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) continue;
      seen += messages.length;
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: pair.rawUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: LOOPS }, loop));
}

/** Worker consume beside the raw loop on `pair`, each round on freshly published `envelopes()`. */
async function compareConsume(
  pair: Pair,
  name: string,
  envelopes: () => Envelope[],
): Promise<Comparison> {
  const [ours, raw] = await interleaved(ROUNDS, [
    async () => {
      await publishAll(pair.transport, envelopes(), BATCH, LANES);
      return consumeWithWorker({
        label: 'onceflow worker consume',
        transport: pair.transport,
        records: createMemoryStore(),
        count: CONSUME,
        concurrency: CONCURRENCY,
      });
    },
    async () => {
      await rawPublish(pair, envelopes());
      return measure('client consume+delete', CONSUME, () => rawConsume(pair, CONSUME));
    },
  ]);
  if (!ours || !raw) throw new Error('bench: missing results');
  return { name: `consume ${CONSUME}, ${name} (concurrency ${CONCURRENCY})`, ours, raw, aim: 0.8 };
}

/** The workload with every message its own key: a FIFO group each. */
const ownGroups = () => benchEnvelopes(CONSUME).map((e) => ({ ...e, key: e.id }));

const fifo = await openPair(true, 'fifo');
const standard = await openPair(false, 'std');
try {
  const [oursPub, rawPub] = await interleaved(ROUNDS, [
    () =>
      measure('onceflow publish', PUBLISH, () =>
        publishAll(fifo.transport, benchEnvelopes(PUBLISH), BATCH, LANES),
      ),
    () => measure('client publish', PUBLISH, () => rawPublish(fifo, benchEnvelopes(PUBLISH))),
  ]);
  if (!oursPub || !rawPub) throw new Error('bench: missing results');
  await fifo.purge();
  const rows: Comparison[] = [
    {
      name: `publish ${PUBLISH}, FIFO (batch ${BATCH}, ${LANES} lanes)`,
      ours: oursPub,
      raw: rawPub,
      aim: 0.95,
    },
    await compareConsume(fifo, 'FIFO, 64 groups', () => benchEnvelopes(CONSUME)),
    await compareConsume(fifo, 'FIFO, a group each', ownGroups),
    await compareConsume(standard, 'standard', () => benchEnvelopes(CONSUME)),
  ];
  printComparisons(`SQS at ${endpoint} (median of ${ROUNDS} rounds)`, rows);
} finally {
  await fifo.close();
  await standard.close();
  client.destroy();
}
