import { type Delivery, type Subscription, errorLogFields, eventLogFields } from '@onceflow/core';
import { createInFlight, runDelivery } from '@onceflow/core/kit';
import { setMaxListeners } from 'node:events';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { batchCommit } from './commit.js';
import { HEADER_ROOM_BYTES, type KafkaConfig } from './config.js';
import { type RecordContext, recordDelivery } from './delivery.js';
import { readMeta } from './marshal.js';
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
 * settled records. A retry-tier or dead-letter partition whose next record is not yet due is
 * paused until it is (heartbeats go on). While a batch is handled, this
 * member heartbeats; if the group fences it (session lost, rebalance timeout), the batch's
 * deliveries are aborted and their records are redelivered to the new owner.
 *
 * `close()` stops taking records, waits for in-flight handlers and their commits, then leaves the
 * group (its partitions move to the other members at once). Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { kafka, config, publisher, route } = deps;
  const { logger } = config;
  const inFlight = createInFlight(deps.concurrency);
  const timers = new Set<NodeJS.Timeout>();
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

  const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
    const { batch, heartbeat, pause, isRunning, isStale } = payload;
    const { topic, partition } = batch;
    const lost = new AbortController();
    setMaxListeners(0, lost.signal); // one listener per delivery of the batch
    // Not consumer.commitOffsets: it reports success without committing while the consumer restarts.
    const offsets = trackOffsets(batchCommit(payload, config.sessionTimeoutMs));
    let rebalancingSince: number | undefined;
    const beat = setInterval(() => {
      heartbeat().then(
        () => {
          rebalancingSince = undefined;
        },
        (err: { type?: string }) => {
          if (err.type === 'REBALANCE_IN_PROGRESS') rebalancingSince ??= Date.now();
          const timedOut =
            rebalancingSince !== undefined &&
            Date.now() - rebalancingSince > config.rebalanceTimeoutMs;
          if ((err.type && FENCED.has(err.type)) || timedOut) lost.abort();
        },
      );
    }, config.heartbeatIntervalMs);
    const ctx: RecordContext = { route, publisher, offsets, signal: lost.signal };
    const lanes = new Map<string, Promise<unknown>>();
    const tasks: Promise<unknown>[] = [];
    let last: string | undefined;
    const delayed = route.delayed(topic);
    try {
      for (const message of batch.messages) {
        if (closing || !isRunning() || isStale() || lost.signal.aborted) break;
        if (delayed) {
          const wait = readMeta(message).notBefore - Date.now();
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
        while (!inFlight.hasRoom) await inFlight.whenRoom();
        if (closing || lost.signal.aborted) break;
        const offset = Number(message.offset);
        offsets.track(offset);
        if (message.value === null && topic === route.dlq) {
          // a tombstone an earlier version's purge left on the dead-letter topic: nothing to deliver
          tasks.push(offsets.finish(offset).catch(() => undefined));
          last = message.offset;
          continue;
        }
        const key = message.key?.toString('base64');
        const before = key === undefined ? undefined : lanes.get(key);
        const task = inFlight.run(async () => {
          await before;
          await handle(ctx, message, offset);
        });
        if (key !== undefined)
          lanes.set(
            key,
            task.catch(() => undefined),
          );
        tasks.push(task);
        last = message.offset;
      }
      await Promise.allSettled(tasks);
    } finally {
      clearInterval(beat);
    }
    const barrier = offsets.barrier;
    if (barrier !== undefined) consumer.seek({ topic, partition, offset: String(barrier) });
    else if (last !== undefined) payload.resolveOffset(last);
  };

  const handle = async (ctx: RecordContext, message: KafkaMessage, offset: number) => {
    const init = recordDelivery(ctx, message);
    const outcome = await runDelivery(deps.handler, init, {
      onError: (err) =>
        logger.warn(
          {
            ...eventLogFields(init.envelope, init.attempt),
            ...errorLogFields(err),
            topic: config.topic,
          },
          'settlement not recorded',
        ),
    });
    if (outcome === undefined) ctx.offsets.abandon(offset);
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
        await consumer.disconnect().catch(() => undefined);
      })();
      return closed;
    },
  };
}
