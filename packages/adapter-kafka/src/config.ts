import { silentLogger } from '@onceflow/core';
import {
  loggerSchema,
  parseConfig,
  publishTimeoutSchema,
  wireFormatSchema,
} from '@onceflow/core/kit';
import { z } from 'zod';

const MiB = 1024 * 1024;

/** Default retry tiers (ms): a retry waits in the smallest tier not shorter than its delay. */
export const DEFAULT_RETRY_TIERS_MS: readonly number[] = [
  1_000, 10_000, 60_000, 600_000, 3_600_000,
];

const positive = z.number().int().positive();
const TOPIC = /^[A-Za-z0-9._-]{1,200}$/;

/** The broker list from `$ONCEFLOW_KAFKA_BROKERS`, else loopback. */
export const defaultBrokers = (): string[] =>
  (process.env.ONCEFLOW_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim());

const schema = z
  .object({
    /** The work topic. Retry topics `<topic>.retry.<n>` and the dead-letter topic `<topic>.dlq` are derived from it. */
    topic: z.string().regex(TOPIC, 'letters, digits, ".", "_" or "-", at most 200'),
    /** Bootstrap brokers. Default `$ONCEFLOW_KAFKA_BROKERS` (comma-separated), else `127.0.0.1:9092`. */
    brokers: z
      .array(z.string().regex(/^[^:\s]+:\d+$/, 'host:port'))
      .min(1)
      .readonly()
      .default(defaultBrokers),
    /** Consumer group of the workers. Default `<topic>.workers`. */
    groupId: z.string().min(1).optional(),
    /** Client id sent to the broker. Default `onceflow`. */
    clientId: z.string().min(1).default('onceflow'),
    /** Partitions of the work, retry and dead-letter topics when they are created. Default 3. */
    partitions: positive.default(3),
    /** Replication factor of the topics `start()` creates. Default 1 (a single broker). */
    replicationFactor: positive.default(1),
    /** Create missing topics in `start()`. Default true; set false where topics are provisioned elsewhere. */
    createTopics: z.boolean().default(true),
    /**
     * Retry tiers, ascending, in ms: tier n is topic `<topic>.retry.<n>`. A retry goes to the smallest
     * tier not shorter than its delay and is consumed once due (never early; up to one tier late
     * behind a longer wait in the same tier). The largest is the declared `maxDelayMs`.
     */
    retryTiersMs: z
      .array(positive)
      .min(1)
      .readonly()
      .refine((t) => t.every((v, i) => i === 0 || v > (t[i - 1] ?? 0)), 'must be ascending')
      .default(DEFAULT_RETRY_TIERS_MS),
    /** Largest encoded envelope accepted, in bytes. Default 1 MiB; topics get 64 KiB more for headers. */
    maxMessageBytes: positive.default(MiB),
    /**
     * Consumer session timeout: a member silent this long loses its partitions; also the time limit
     * of one offset commit. Default 10 000.
     */
    sessionTimeoutMs: positive.default(10_000),
    /**
     * Longest a settled record's offset waits for its commit while its batch is still being
     * handled; a batch's offsets are also committed once all its records are settled, before the
     * next batch of the partition is fetched, when a rebalance begins and on `close()`. What a
     * crash loses of them is redelivered. Default 1 000.
     */
    commitIntervalMs: positive.default(1_000),
    /** How long a rebalance waits for a member busy in a handler to rejoin. Default 60 000. */
    rebalanceTimeoutMs: positive.default(60_000),
    /**
     * The declared `lock.ms`: the worker's processing lease on the event record (renewed by its
     * heartbeat while a handler runs). Kafka's lock is the member's hold on the partition, which
     * lasts while the member heartbeats, so there is nothing to renew on the broker. Default 30 000.
     */
    lockMs: positive.default(30_000),
    /**
     * Deliveries after which a retry goes to `<topic>.dlq` instead of a retry topic (read back by
     * `consumeDeadLetters`). Counted by the attempt header, which only retries raise: a record
     * redelivered after its member died keeps its attempt. Keep it above the worker's
     * `retry.maxAttempts`. Default 20.
     */
    deliveryLimit: positive.default(20),
    /** Heartbeat interval, below `sessionTimeoutMs`. Default 1 000. */
    heartbeatIntervalMs: positive.default(1_000),
    /** Longest a fetch waits on an idle topic (bounds `close()` latency). Default 500. */
    fetchWaitMs: positive.default(500),
    /**
     * Longest a `publish` waits for the broker, in ms: past it, or at once while the broker is
     * known down, it rejects with `TransportUnavailableError` and the receiver answers 503 with
     * `Retry-After`. The producer's connection and request timeouts and retries are kept within
     * about this too. Default 500.
     */
    publishTimeoutMs: publishTimeoutSchema,
    /**
     * What records carry: `onceflow` (the default: wire format v1 as the value) or
     * `cloudevents-binary` (the CloudEvents Kafka binding's binary mode: `ce_*` headers, the
     * payload as the value, the key as the record key), which any CloudEvents consumer reads.
     * Consumers read both, whatever is set here.
     */
    wireFormat: wireFormatSchema,
    /** Where kafkajs and the adapter log (kafkajs at warn and above). Default silent. */
    logger: loggerSchema.default(silentLogger),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.heartbeatIntervalMs >= o.sessionTimeoutMs)
      ctx.addIssue({
        code: 'custom',
        path: ['heartbeatIntervalMs'],
        message: 'must be below sessionTimeoutMs',
      });
  });

/** Options of `createKafkaTransport`. Only `topic` is required; every field is documented above. */
export type KafkaTransportOptions = z.input<typeof schema>;

export type KafkaConfig = z.output<typeof schema> & { readonly groupId: string };

/** Header room the topics get above `maxMessageBytes`. */
export const HEADER_ROOM_BYTES = 64 * 1024;

/** Validates options and applies defaults. Throws `ConfigError` naming every bad field. */
export function resolveConfig(options: KafkaTransportOptions): KafkaConfig {
  const c = parseConfig('kafka transport options', schema, options);
  return { ...c, groupId: c.groupId ?? `${c.topic}.workers` };
}

/** The topic names of one work topic. */
export function topicNames(topic: string, tiers: number) {
  return {
    main: topic,
    retries: Array.from({ length: tiers }, (_, i) => `${topic}.retry.${i + 1}`),
    dlq: `${topic}.dlq`,
  };
}
