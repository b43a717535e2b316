import { type Delivery, type Subscription, errorLogFields, eventLogFields } from '@onceflow/core';
import { type DeliveryInit, createInFlight } from '@onceflow/core/kit';
import { setMaxListeners } from 'node:events';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { batchCommit } from './commit.js';
import { HEADER_ROOM_BYTES, type KafkaConfig } from './config.js';
import { type RecordContext, handOut } from './delivery.js';
import { readNotBefore } from './marshal.js';
import { trackOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';
import type { ConsumerRoute } from './routes.js';

export interface ConsumerDeps {
  readonly kafka: Kafka;
  readonly config: KafkaConfig;
  /** The topics and group this member reads, and where its retries go. */
  readonly route: ConsumerRoute;
  readonly publisher: Publisher;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
}

/** Heartbeat errors after which this member no longer holds its partitions. */
const FENCED = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'FENCED_INSTANCE_ID']);

/**
 * One group member on its route's topics (the work topic and its retry topics, or the dead-letter
 * topic). Records of a partition are handed out in offset order, records of one key one at a
 * time, up to `concurrency` handlers across all partitions; the group offset moves only past
 * settled records. A settlement is recorded in memory at once (the handler's slot is free again)
 * and committed in batches: every `commitIntervalMs` while a batch is handled, and once the whole
 * batch is settled, before the partition's next batch is fetched. When a rebalance begins the
 * member stops handing out records of its batches, commits what is settled and rejoins. A retry-tier or dead-letter partition whose next record is not yet due is
 * paused until it is (heartbeats go on). While a batch is handled, this
 * member heartbeats; if the group fences it (session lost, rebalance timeout), the batch's
 * deliveries are aborted and their records are redelivered to the new owner.
 *
 * `close()` stops taking records, waits for in-flight handlers and for the commit of every
 * settlement, then leaves the group (its partitions move to the other members at once). Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { kafka, config, publisher, route } = deps;
  const { logger } = config;
  const inFlight = createInFlight(deps.concurrency);
  const timers = new Set<NodeJS.Timeout>();
  /** The batches being handled, each until its last commit is answered: `close()` waits for them. */
  const batches = new Set<Promise<void>>();
  let closing = false;

  const consumer: Consumer = kafka.consumer({
    groupId: route.groupId,
    sessionTimeout: config.sessionTimeoutMs,
    rebalanceTimeout: config.rebalanceTimeoutMs,
    heartbeatInterval: config.heartbeatIntervalMs,
    maxWaitTimeInMs: config.fetchWaitMs,
    maxBytesPerPartition: Math.max(1024 * 1024, config.maxMessageBytes + HEADER_ROOM_BYTES),
    allowAutoTopicCreation: false,
    // kafkajs restarts a crashed consumer (e.g. after the broker was gone for a while) unless told not to
    retry: {
      retries: 8,
      initialRetryTime: 200,
      maxRetryTime: 5_000,
      restartOnFailure: async () => !closing,
    },
  });
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    logger.warn(
      { err: payload.error, topic: config.topic, restart: payload.restart },
      'kafka consumer crashed',
    ),
  );

  const unrecorded = (err: unknown, init: DeliveryInit) =>
    logger.warn(
      {
        ...eventLogFields(init.envelope, init.attempt),
        ...errorLogFields(err),
        topic: config.topic,
      },
      'settlement not recorded',
    );

  const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    const handled = handleBatch(payload);
    batches.add(handled);
    try {
      await handled;
    } finally {
      batches.delete(handled);
    }
  };

  const handleBatch = async (payload: EachBatchPayload): Promise<void> => {
    const { batch, heartbeat, pause, isRunning, isStale } = payload;
    const { topic, partition } = batch;
    const lost = new AbortController();
    setMaxListeners(0, lost.signal); // one listener per delivery of the batch
    // Not consumer.commitOffsets: it reports success without committing while the consumer restarts.
    const offsets = trackOffsets(batchCommit(payload, config.sessionTimeoutMs), (err, from) =>
      logger.warn(
        { err, topic, partition, from },
        'kafka offset commit failed: records from this offset are redelivered',
      ),
    );
    const committer = setInterval(() => void offsets.commit(), config.commitIntervalMs);
    let rebalancingSince: number | undefined;
    const beat = setInterval(() => {
      heartbeat().then(
        () => {
          rebalancingSince = undefined;
        },
        (err: { type?: string }) => {
          if (err.type === 'REBALANCE_IN_PROGRESS' && rebalancingSince === undefined) {
            rebalancingSince = Date.now();
            void offsets.commit(); // what is settled, before the partitions are given up
          }
          const timedOut =
            rebalancingSince !== undefined &&
            Date.now() - rebalancingSince > config.rebalanceTimeoutMs;
          if ((err.type && FENCED.has(err.type)) || timedOut) lost.abort();
        },
      );
    }, config.heartbeatIntervalMs);
    const ctx: RecordContext = {
      handler: deps.handler,
      route,
      publisher,
      offsets,
      signal: lost.signal,
      unrecorded,
    };
    /**
     * Per key, the last record handed out: the next one of that key starts once it settled, so
     * once every lane's last record settled, all of them did. Records without a key go in `loose`.
     */
    const lanes = new Map<string, Promise<unknown>>();
    const loose: Promise<unknown>[] = [];
    let last: string | undefined;
    const delayed = route.delayed(topic);
    /** Hand out no more records of this batch: closing, rebalancing, or the partition is lost. */
    const stopping = () => closing || rebalancingSince !== undefined || lost.signal.aborted;
    // kafkajs's isStale() builds a string per call; it can change only while this loop awaits
    let awaited = true;
    try {
      for (const message of batch.messages) {
        if (stopping() || !isRunning() || (awaited && isStale())) break;
        awaited = false;
        if (delayed) {
          const wait = readNotBefore(message) - Date.now();
          if (wait > 0) {
            const resume = pause();
            const timer = setTimeout(() => {
              timers.delete(timer);
              resume();
            }, wait);
            timers.add(timer);
            break;
          }
        }
        while (!inFlight.hasRoom) {
          await inFlight.whenRoom();
          awaited = true;
        }
        if (stopping()) break;
        const offset = Number(message.offset);
        offsets.track(offset);
        if (message.value === null && topic === route.dlq) {
          // a tombstone an earlier version's purge left on the dead-letter topic: nothing to deliver
          try {
            offsets.settle(offset);
          } catch {
            // refused: an earlier record will be redelivered, and this one with it
          }
          last = message.offset;
          continue;
        }
        // latin1: one character per byte, so equal keys and only they share a lane
        const key = message.key?.toString('latin1');
        const before = key === undefined ? undefined : lanes.get(key);
        const task = inFlight.run(() => handOut(ctx, message, offset, before));
        if (key === undefined) loose.push(task);
        else lanes.set(key, task);
        last = message.offset;
      }
      if (lanes.size > 0 || loose.length > 0) await Promise.all([...lanes.values(), ...loose]);
      await offsets.commit();
    } finally {
      clearInterval(committer);
      clearInterval(beat);
    }
    const barrier = offsets.barrier;
    if (barrier !== undefined) consumer.seek({ topic, partition, offset: String(barrier) });
    else if (last !== undefined) payload.resolveOffset(last);
  };

  await consumer.connect();
  await consumer.subscribe({ topics: [...route.topics], fromBeginning: true });
  // Not awaited: joining may wait for a rebalance that other members hold up.
  void consumer
    .run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: Math.min(64, config.partitions * route.topics.length),
      eachBatch,
    })
    .catch((err: unknown) => logger.error({ err, topic: config.topic }, 'kafka consumer failed'));

  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        closing = true;
        for (const t of timers) clearTimeout(t);
        timers.clear();
        await inFlight.idle();
        await Promise.allSettled([...batches]); // their last commits
        await consumer.disconnect().catch(() => undefined);
      })();
      return closed;
    },
  };
}
