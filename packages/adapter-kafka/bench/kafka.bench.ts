/**
 * Publish and end-to-end consume throughput of the Kafka transport beside raw kafkajs doing the
 * same work, on `$ONCEFLOW_KAFKA_BROKERS` (else 127.0.0.1:9092). Prints; never fails.
 *
 * - publish: `transport.publish` vs an idempotent kafkajs producer's `send` with `acks: -1`, the
 *   same encoded bodies, key and headers, both in batches of 50 from 4 concurrent lanes (the raw
 *   lanes take turns: kafkajs's idempotent producer breaks on concurrent sends);
 * - consume: `createWorker` with the record guard (memory store) and a no-op handler vs two raw
 *   kafkajs consumers that decode each envelope: one with `eachMessage` and offsets auto-committed
 *   every few seconds (less work than ours: a crash may lose no record but redelivers up to 5 s of
 *   them), one with `eachBatch` committing after each batch is handled (`resolveOffset` per record,
 *   then `commitOffsetsIfNecessary`), the offsets ours commits too (ours commits per batch and
 *   every `commitIntervalMs` while a batch is handled; `ack()` does not wait for the commit);
 *   and the same loop taking and completing each event's record in a memory record store, as
 *   the worker's guard does (`begin` then `complete`, the same store type as ours); and that
 *   loop also parsing each payload as JSON (`payloadJson`), as the worker does for every handler
 *   (its `event` argument), which the other raw loops never do. All on a pre-filled topic of 4
 *   partitions, the group join included in every timing.
 *
 * Each contender runs one unmeasured round first, then `ROUNDS` interleaved rounds (the median counts).
 * The consume rows also print this process's CPU and heap allocation per record on each side.
 */
import { randomBytes } from 'node:crypto';
import {
  type Measured,
  benchEnvelopes,
  consumeWithWorker,
  interleaved,
  measure,
  printComparisons,
  printCosts,
  publishAll,
  rawRecordGuard,
} from '@onceflow/conformance/bench';
import { type Envelope, payloadJson } from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { decodeEnvelope, encodeEnvelope } from '@onceflow/core/kit';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaTransport, defaultBrokers, removeKafkaTopology } from '../src/index.js';

const brokers = defaultBrokers();
const run = randomBytes(3).toString('hex');
/** Topic names start with this (`$ONCEFLOW_BENCH_TOPIC_PREFIX`), so runs sharing a broker can tell theirs apart. */
const prefix = process.env.ONCEFLOW_BENCH_TOPIC_PREFIX ?? 'onceflow-bench';
const COUNT = Number(process.env.BENCH_COUNT ?? 20_000);
const ROUNDS = 3;
const BATCH = 50;
const IN_FLIGHT = 4;
const CONCURRENCY = 32;
const PARTITIONS = 4;

const kafka = new Kafka({ clientId: 'onceflow-bench', brokers, logLevel: logLevel.NOTHING });
const used: string[] = [];
let topics = 0;
const options = (topic: string) => ({
  topic,
  brokers,
  partitions: PARTITIONS,
  fetchWaitMs: 100,
  publishTimeoutMs: 60_000, // the bench measures throughput on a loaded machine, not the deadline
});

/** A fresh topic set up by the transport (work, retry and dead-letter topics). */
async function freshTopic(): Promise<string> {
  const topic = `${prefix}-${run}-${++topics}`;
  used.push(topic);
  const t = createKafkaTransport(options(topic));
  await t.start();
  await t.close();
  return topic;
}

const records = (envelopes: readonly Envelope[]) =>
  envelopes.map((e) => ({
    key: e.key ?? null,
    value: encodeEnvelope(e),
    headers: {
      'x-onceflow-wire': '1',
      'x-onceflow-event-id': e.id,
      'x-onceflow-dedupe-key': `${e.source}:${e.id}`,
      'x-onceflow-attempt': '1',
    },
  }));

async function rawPublish(topic: string, envelopes: readonly Envelope[]): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let next = 0;
  // kafkajs's idempotent producer fails concurrent sends now and then with
  // OUT_OF_ORDER_SEQUENCE_NUMBER, so the lanes take turns: one send in flight.
  let turn = Promise.resolve();
  const lane = async () => {
    while (next < envelopes.length) {
      const slice = envelopes.slice(next, next + BATCH);
      next += BATCH;
      const sent = turn.then(() => producer.send({ topic, acks: -1, messages: records(slice) }));
      turn = sent.then(() => undefined);
      await sent;
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  } finally {
    await producer.disconnect();
  }
}

const publishOurs = async () => {
  const topic = await freshTopic();
  const transport = createKafkaTransport(options(topic));
  await transport.start();
  const envelopes = benchEnvelopes(COUNT);
  try {
    return await measure('publish ours', COUNT, () =>
      publishAll(transport, envelopes, BATCH, IN_FLIGHT),
    );
  } finally {
    await transport.close();
  }
};

const publishRaw = async () => {
  const topic = await freshTopic();
  const envelopes = benchEnvelopes(COUNT);
  return measure('publish raw', COUNT, () => rawPublish(topic, envelopes));
};

const consumeOurs = async () => {
  const topic = await freshTopic();
  await rawPublish(topic, benchEnvelopes(COUNT));
  const transport = createKafkaTransport(options(topic));
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
};

const consumeRaw = async () => {
  const topic = await freshTopic();
  await rawPublish(topic, benchEnvelopes(COUNT));
  const consumer = kafka.consumer({ groupId: `${topic}.raw`, maxWaitTimeInMs: 100 });
  let handled = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  try {
    const result: Measured = await measure('consume raw', COUNT, async () => {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently: PARTITIONS,
        eachMessage: async ({ message }) => {
          decodeEnvelope(message.value ?? new Uint8Array(0));
          if (++handled === COUNT) done();
        },
      });
      await finished;
    });
    return result;
  } finally {
    await consumer.disconnect();
  }
};

/** The commit-per-batch loop; `guarded`: with the record store's statements; `parsed`: and the payload's JSON. */
const consumeRawCommitted =
  (guarded: boolean, parsed = false) =>
  async () => {
    const topic = await freshTopic();
    const guard = rawRecordGuard(createMemoryStore());
    await rawPublish(topic, benchEnvelopes(COUNT));
    const consumer = kafka.consumer({ groupId: `${topic}.raw-committed`, maxWaitTimeInMs: 100 });
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      const label = parsed
        ? 'consume raw, commit per batch, records, JSON'
        : guarded
          ? 'consume raw, commit per batch, record store'
          : 'consume raw, commit per batch';
      const result: Measured = await measure(label, COUNT, async () => {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS,
          eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
            for (const message of batch.messages) {
              const envelope = decodeEnvelope(message.value ?? new Uint8Array(0));
              if (parsed) payloadJson(envelope);
              if (guarded) await guard(envelope);
              resolveOffset(message.offset);
            }
            const next = String(Number(batch.lastOffset()) + 1);
            const partitions = [{ partition: batch.partition, offset: next }];
            await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions }] });
            handled += batch.messages.length;
            if (handled >= COUNT) done();
          },
        });
        await finished;
      });
      return result;
    } finally {
      await consumer.disconnect();
    }
  };

/**
 * `interleaved` after one unmeasured round of every contender: a process's first round runs cold
 * (JIT, kafkajs's first connections), and would otherwise count against whichever goes first.
 */
async function warmInterleaved(contenders: readonly (() => Promise<Measured>)[]) {
  for (const run of contenders) await run();
  return interleaved(ROUNDS, contenders);
}

try {
  const [pubOurs, pubRaw] = await warmInterleaved([publishOurs, publishRaw]);
  const [conOurs, conRaw, conRawCommitted, conRawGuarded, conRawParsed] = await warmInterleaved([
    consumeOurs,
    consumeRaw,
    consumeRawCommitted(false),
    consumeRawCommitted(true),
    consumeRawCommitted(true, true),
  ]);
  if (
    !pubOurs ||
    !pubRaw ||
    !conOurs ||
    !conRaw ||
    !conRawCommitted ||
    !conRawGuarded ||
    !conRawParsed
  )
    throw new Error('no measurement');
  printComparisons(`Kafka (${brokers.join(',')}), ${COUNT} events of ~700 B, median of ${ROUNDS}`, [
    { name: 'publish (batch 50 x 4 in flight)', ours: pubOurs, raw: pubRaw, aim: 0.95 },
    {
      name: `consume vs auto-commit (c=${CONCURRENCY})`,
      ours: conOurs,
      raw: conRaw,
      aim: 0.8,
    },
    {
      name: `consume vs commit/batch (c=${CONCURRENCY})`,
      ours: conOurs,
      raw: conRawCommitted,
      aim: 0.8,
    },
    {
      name: `consume vs commit/batch + records`,
      ours: conOurs,
      raw: conRawGuarded,
      aim: 0.8,
    },
    {
      name: `consume vs commit/batch + rec+JSON`,
      ours: conOurs,
      raw: conRawParsed,
      aim: 0.8,
    },
  ]);
  printCosts('Consume: this process per record (medians of the rounds; ratios to the first row)', [
    conRawGuarded,
    conRawParsed,
    conRawCommitted,
    conRaw,
    conOurs,
  ]);
} finally {
  for (const topic of used) await removeKafkaTopology({ topic, brokers }).catch(() => undefined);
}
