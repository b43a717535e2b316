import { type Delivery, type Subscription, errorInfo } from '@onceflow/core';
import { createInFlight, deadLetterHeaders, runDelivery } from '@onceflow/core/kit';
import { setMaxListeners } from 'node:events';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { batchCommit } from './commit.js';
import { HEADER_ROOM_BYTES, type KafkaConfig, topicNames } from './config.js';
import { type RecordContext, deadLetterId, recordDelivery } from './delivery.js';
import { readEnvelope, readMeta } from './marshal.js';
import { trackOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';

export interface ConsumerDeps {
  readonly kafka: Kafka;
  readonly config: KafkaConfig;
  readonly publisher: Publisher;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
}

/** Heartbeat errors after which this member no longer holds its partitions. */
const FENCED = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'FENCED_INSTANCE_ID']);

/**
 * One group member on the work topic and its retry topics. Records of a partition are handed out
 * in offset order, records of one key one at a time, up to `concurrency` handlers across all
 * partitions; the group offset moves only past settled records. A retry-tier partition whose next
 * record is not yet due is paused until it is (heartbeats go on). While a batch is handled, this
 * member heartbeats; if the group fences it (session lost, rebalance timeout), the batch's
 * deliveries are aborted and their records are redelivered to the new owner.
 *
 * `close()` stops taking records, waits for in-flight handlers and their commits, then leaves the
 * group (its partitions move to the other members at once). Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { kafka, config, publisher } = deps;
  const { logger } = config;
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const inFlight = createInFlight(deps.concurrency);
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const consumer: Consumer = kafka.consumer({
    groupId: config.groupId,
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

  const deadLetterRaw = async (message: KafkaMessage, err: unknown) => {
    logger.error({ err, topic: config.topic, offset: message.offset }, 'undecodable record');
    const headers = deadLetterHeaders({
      reason: 'wire format: not a v1 envelope',
      attempts: readMeta(message).attempt,
      lastError: errorInfo(err),
      deadLetteredAt: new Date().toISOString(),
    });
    await publisher.send(names.dlq, [{ key: deadLetterId(), value: message.value, headers }]);
  };

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
    const ctx: RecordContext = {
      config,
      names,
      publisher,
      offsets,
      signal: lost.signal,
      heartbeat,
    };
    const lanes = new Map<string, Promise<unknown>>();
    const tasks: Promise<unknown>[] = [];
    let last: string | undefined;
    const tier = topic !== names.main;
    try {
      for (const message of batch.messages) {
        if (closing || !isRunning() || isStale() || lost.signal.aborted) break;
        if (tier) {
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
    let init: ReturnType<typeof recordDelivery>;
    try {
      init = recordDelivery(ctx, message, readEnvelope(message), readMeta(message));
    } catch (err) {
      try {
        await deadLetterRaw(message, err);
        await ctx.offsets.finish(offset);
      } catch {
        ctx.offsets.abandon(offset);
      }
      return;
    }
    const outcome = await runDelivery(deps.handler, init, {
      onError: (err) =>
        logger.warn({ err, topic: config.topic, id: init.envelope.id }, 'settlement not recorded'),
    });
    if (outcome === undefined) ctx.offsets.abandon(offset);
  };

  await consumer.connect();
  await consumer.subscribe({ topics: [names.main, ...names.retries], fromBeginning: true });
  // Not awaited: joining may wait for a rebalance that other members hold up.
  void consumer
    .run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: Math.min(64, config.partitions * (1 + names.retries.length)),
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
