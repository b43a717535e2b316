/**
 * Publish and consume throughput of the SQS transport beside @aws-sdk/client-sqs doing the same
 * work: `SendMessageBatch` with the same batch size and the same lanes, and bare receive-and-
 * delete loops (as many as the transport runs). FIFO queues. Prints a table; never fails on a
 * time. `pnpm bench` in this package ($ONCEFLOW_SQS_ENDPOINT, else ElasticMQ on loopback).
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
  consumeWithWorker,
  interleaved,
  measure,
  printComparisons,
  publishAll,
} from '@onceflow/conformance/bench';
import { createMemoryInbox, type Envelope, encodeEnvelope } from '@onceflow/core';
import { createSqsTransport, deleteSqsQueues, ensureSqsQueues } from '../src/index.js';
import { assertSqsAnswers, endpoint, testClient } from '../test/sqs.js';

const PUBLISH = 2_000;
const CONSUME = 2_000;
const ROUNDS = 3;
const BATCH = 10; // SendMessageBatch's maximum
const LANES = 8;
const CONCURRENCY = 32;
const LOOPS = 4; // receive loops the transport runs at concurrency 32

const client = testClient();
await assertSqsAnswers(client);
const run = Date.now().toString(36);
const ours = `onceflow-bench-${run}`;
const raw = `onceflow-bench-raw-${run}`;
// One-second long polls on both sides, as the raw loop's.
const transport = createSqsTransport({ queue: ours, client, waitTimeSeconds: 1 });
await transport.start();
const rawUrl = (await ensureSqsQueues(client, { queue: raw, fifo: true, maxReceiveCount: 10 })).url;
const oursUrl = transport.queues?.url ?? '';

/** The client alone: the same bodies, ids and groups, SendMessageBatch of BATCH on LANES lanes. */
async function rawPublish(envelopes: readonly Envelope[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < envelopes.length) {
      const slice = envelopes.slice(next, next + BATCH);
      next += BATCH;
      await client.send(
        new SendMessageBatchCommand({
          QueueUrl: rawUrl,
          Entries: slice.map((e, i) => ({
            Id: String(i),
            MessageBody: encodeEnvelope(e),
            MessageDeduplicationId: createHash('sha256')
              .update(`${e.source}:${e.id}`)
              .digest('hex'),
            MessageGroupId: e.key,
          })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
}

/** The client alone: LOOPS loops of receive (10, long poll) and DeleteMessageBatch, until `count`. */
async function rawConsume(count: number): Promise<void> {
  let seen = 0;
  const loop = async () => {
    while (seen < count) {
      const out = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: rawUrl,
          MaxNumberOfMessages: 10,
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
          QueueUrl: rawUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: LOOPS }, loop));
}

try {
  const [oursPub, rawPub] = await interleaved(ROUNDS, [
    () =>
      measure('onceflow publish', PUBLISH, () =>
        publishAll(transport, benchEnvelopes(PUBLISH), BATCH, LANES),
      ),
    () => measure('client publish', PUBLISH, () => rawPublish(benchEnvelopes(PUBLISH))),
  ]);
  for (const url of [oursUrl, rawUrl]) await client.send(new PurgeQueueCommand({ QueueUrl: url }));

  const [oursCon, rawCon] = await interleaved(ROUNDS, [
    async () => {
      await publishAll(transport, benchEnvelopes(CONSUME), BATCH, LANES);
      return consumeWithWorker({
        label: 'onceflow worker consume',
        transport,
        processed: createMemoryInbox(),
        count: CONSUME,
        concurrency: CONCURRENCY,
      });
    },
    async () => {
      await rawPublish(benchEnvelopes(CONSUME));
      return measure('client consume+delete', CONSUME, () => rawConsume(CONSUME));
    },
  ]);
  if (!oursPub || !rawPub || !oursCon || !rawCon) throw new Error('bench: missing results');
  printComparisons(`SQS at ${endpoint} (FIFO queues; median of ${ROUNDS} rounds)`, [
    {
      name: `publish ${PUBLISH} (batch ${BATCH}, ${LANES} lanes)`,
      ours: oursPub,
      raw: rawPub,
      aim: 0.95,
    },
    {
      name: `consume ${CONSUME} (concurrency ${CONCURRENCY})`,
      ours: oursCon,
      raw: rawCon,
      aim: 0.8,
    },
  ]);
} finally {
  await transport.close();
  await deleteSqsQueues(client, { queue: ours, fifo: true });
  await deleteSqsQueues(client, { queue: raw, fifo: true });
  client.destroy();
}
