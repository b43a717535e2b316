import { type Logger, silentLogger } from '@onceflow/core';
import {
  loggerSchema,
  parseConfig,
  publishTimeoutSchema,
  type SameFields,
  type WireFormat,
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
    topic: z.string().regex(TOPIC, 'letters, digits, ".", "_" or "-", at most 200'),
    brokers: z
      .array(z.string().regex(/^[^:\s]+:\d+$/, 'host:port'))
      .min(1)
      .readonly()
      .default(defaultBrokers),
    groupId: z.string().min(1).optional(),
    clientId: z.string().min(1).default('onceflow'),
    partitions: positive.default(3),
    replicationFactor: positive.default(1),
    createTopics: z.boolean().default(true),
    retryTiersMs: z
      .array(positive)
      .min(1)
      .readonly()
      .refine((t) => t.every((v, i) => i === 0 || v > (t[i - 1] ?? 0)), 'must be ascending')
      .default(DEFAULT_RETRY_TIERS_MS),
    maxMessageBytes: positive.default(MiB),
    sessionTimeoutMs: positive.default(10_000),
    commitIntervalMs: positive.default(1_000),
    rebalanceTimeoutMs: positive.default(60_000),
    lockMs: positive.default(30_000),
    deliveryLimit: positive.default(20),
    heartbeatIntervalMs: positive.default(1_000),
    fetchWaitMs: positive.default(500),
    publishTimeoutMs: publishTimeoutSchema,
    wireFormat: wireFormatSchema,
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

/** Options of `createKafkaTransport`. Only `topic` is required. */
export interface KafkaTransportOptions {
  /** The work topic. Retry topics `<topic>.retry.<n>` and the dead-letter topic `<topic>.dlq` are derived from it. */
  readonly topic: string;
  /** Bootstrap brokers. Default `$ONCEFLOW_KAFKA_BROKERS` (comma-separated), else `127.0.0.1:9092`. */
  readonly brokers?: readonly string[] | undefined;
  /** Consumer group of the workers. Default `<topic>.workers`. */
  readonly groupId?: string | undefined;
  /** Client id sent to the broker. Default `onceflow`. */
  readonly clientId?: string | undefined;
  /** Partitions of the work, retry and dead-letter topics when they are created. Default 3. */
  readonly partitions?: number | undefined;
  /** Replication factor of the topics `start()` creates. Default 1 (a single broker). */
  readonly replicationFactor?: number | undefined;
  /** Create missing topics in `start()`. Default true; set false where topics are provisioned elsewhere. */
  readonly createTopics?: boolean | undefined;
  /**
   * Retry tiers, ascending, in ms: tier n is topic `<topic>.retry.<n>`. A retry goes to the smallest
   * tier not shorter than its delay and is consumed once due (never early; up to one tier late
   * behind a longer wait in the same tier). The largest is the declared `maxDelayMs`.
   */
  readonly retryTiersMs?: readonly number[] | undefined;
  /** Largest encoded envelope accepted, in bytes. Default 1 MiB; topics get 64 KiB more for headers. */
  readonly maxMessageBytes?: number | undefined;
  /**
   * Consumer session timeout: a member silent this long loses its partitions; also the time limit
   * of one offset commit. Default 10 000.
   */
  readonly sessionTimeoutMs?: number | undefined;
  /**
   * Longest a settled record's offset waits for its commit while its batch is still being
   * handled; a batch's offsets are also committed once all its records are settled, before the
   * next batch of the partition is fetched, when a rebalance begins and on `close()`. What a
   * crash loses of them is redelivered. Default 1 000.
   */
  readonly commitIntervalMs?: number | undefined;
  /** How long a rebalance waits for a member busy in a handler to rejoin. Default 60 000. */
  readonly rebalanceTimeoutMs?: number | undefined;
  /**
   * The declared `lock.ms`: the worker's processing lease on the event record (renewed by its
   * heartbeat while a handler runs). Kafka's lock is the member's hold on the partition, which
   * lasts while the member heartbeats, so there is nothing to renew on the broker. Default 30 000.
   */
  readonly lockMs?: number | undefined;
  /**
   * Deliveries after which a retry goes to `<topic>.dlq` instead of a retry topic (read back by
   * `consumeDeadLetters`). Counted by the attempt header, which only retries raise: a record
   * redelivered after its member died keeps its attempt. Keep it above the worker's
   * `retry.maxAttempts`. Default 20.
   */
  readonly deliveryLimit?: number | undefined;
  /** Heartbeat interval, below `sessionTimeoutMs`. Default 1 000. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** Longest a fetch waits on an idle topic (bounds `close()` latency). Default 500. */
  readonly fetchWaitMs?: number | undefined;
  /**
   * Longest a `publish` waits for the broker, in ms: past it, or at once while the broker is
   * known down, it rejects with `TransportUnavailableError` and the receiver answers 503 with
   * `Retry-After`. The producer's connection and request timeouts and retries are kept within
   * about this too. Default 500.
   */
  readonly publishTimeoutMs?: number | undefined;
  /**
   * What records carry: `onceflow` (the default: wire format v1 as the value) or
   * `cloudevents-binary` (the CloudEvents Kafka binding's binary mode: `ce_*` headers, the
   * payload as the value, the key as the record key), which any CloudEvents consumer reads.
   * Consumers read both, whatever is set here.
   */
  readonly wireFormat?: WireFormat | undefined;
  /** Where kafkajs and the adapter log (kafkajs at warn and above). Default silent. */
  readonly logger?: Logger | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof schema>, KafkaTransportOptions> = true;

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
