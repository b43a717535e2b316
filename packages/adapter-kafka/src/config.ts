import { ConfigError, type Logger, silentLogger } from '@onceflow/core';

const MiB = 1024 * 1024;

/** Default retry tiers (ms): a retry waits in the smallest tier not shorter than its delay. */
export const DEFAULT_RETRY_TIERS_MS: readonly number[] = [
  1_000, 10_000, 60_000, 600_000, 3_600_000,
];

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
  /** Partitions of the work and retry topics when `start()` creates them. Default 3. */
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
  /** Consumer session timeout: a member silent this long loses its partitions. Default 10 000. */
  readonly sessionTimeoutMs?: number | undefined;
  /**
   * How long a rebalance waits for a member busy in a handler; also the declared `lock.maxMs`.
   * Default 60 000.
   */
  readonly rebalanceTimeoutMs?: number | undefined;
  /** Heartbeat interval, also while handlers run. Default 1 000. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** Longest a fetch waits on an idle topic (bounds `close()` latency). Default 500. */
  readonly fetchWaitMs?: number | undefined;
  /** Where kafkajs and the adapter log (kafkajs at warn and above). Default silent. */
  readonly logger?: Logger | undefined;
}

export interface KafkaConfig {
  readonly topic: string;
  readonly brokers: string[];
  readonly groupId: string;
  readonly clientId: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly createTopics: boolean;
  readonly retryTiersMs: readonly number[];
  readonly maxMessageBytes: number;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly fetchWaitMs: number;
  readonly logger: Logger;
}

/** Header room the topics get above `maxMessageBytes`. */
export const HEADER_ROOM_BYTES = 64 * 1024;

const TOPIC = /^[A-Za-z0-9._-]{1,200}$/;

/** The broker list from `$ONCEFLOW_KAFKA_BROKERS`, else loopback. */
export const defaultBrokers = (): string[] =>
  (process.env.ONCEFLOW_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim());

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!(Number.isInteger(v) && v > 0))
    throw new ConfigError(`kafka transport: ${name} must be a positive integer, got ${v}`);
  return v;
}

/** Validates options and applies defaults. Throws `ConfigError`. */
export function resolveConfig(o: KafkaTransportOptions): KafkaConfig {
  if (!TOPIC.test(o.topic ?? ''))
    throw new ConfigError(`kafka transport: topic must match ${TOPIC}, got "${o.topic}"`);
  const brokers = [...(o.brokers ?? defaultBrokers())];
  if (brokers.length === 0 || brokers.some((b) => !/^[^:\s]+:\d+$/.test(b)))
    throw new ConfigError(`kafka transport: brokers must be host:port, got ${brokers.join(',')}`);
  const tiers = [...(o.retryTiersMs ?? DEFAULT_RETRY_TIERS_MS)];
  if (tiers.length === 0 || tiers.some((t, i) => !(t > 0) || (i > 0 && t <= (tiers[i - 1] ?? 0))))
    throw new ConfigError('kafka transport: retryTiersMs must be ascending positive numbers');
  const sessionTimeoutMs = positive('sessionTimeoutMs', o.sessionTimeoutMs, 10_000);
  const heartbeatIntervalMs = positive('heartbeatIntervalMs', o.heartbeatIntervalMs, 1_000);
  if (heartbeatIntervalMs >= sessionTimeoutMs)
    throw new ConfigError('kafka transport: heartbeatIntervalMs must be below sessionTimeoutMs');
  return {
    topic: o.topic,
    brokers,
    groupId: o.groupId ?? `${o.topic}.workers`,
    clientId: o.clientId ?? 'onceflow',
    partitions: positive('partitions', o.partitions, 3),
    replicationFactor: positive('replicationFactor', o.replicationFactor, 1),
    createTopics: o.createTopics ?? true,
    retryTiersMs: tiers,
    maxMessageBytes: positive('maxMessageBytes', o.maxMessageBytes, MiB),
    sessionTimeoutMs,
    rebalanceTimeoutMs: positive('rebalanceTimeoutMs', o.rebalanceTimeoutMs, 60_000),
    heartbeatIntervalMs,
    fetchWaitMs: positive('fetchWaitMs', o.fetchWaitMs, 500),
    logger: o.logger ?? silentLogger,
  };
}

/** The topic names of one work topic. */
export function topicNames(topic: string, tiers: number) {
  return {
    main: topic,
    retries: Array.from({ length: tiers }, (_, i) => `${topic}.retry.${i + 1}`),
    dlq: `${topic}.dlq`,
  };
}
