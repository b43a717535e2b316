import { ConfigError, type Logger, silentLogger } from '@onceflow/core';

const MiB = 1024 * 1024;

/** Default delay buckets (ms): a retry waits in the smallest bucket at least as long as asked. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  50, 100, 250, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  1_800_000, 3_600_000,
];

/** Options of `createRabbitMqTransport`. Only `queue` is required. */
export interface RabbitMqTransportOptions {
  /** The work queue. The dead-letter queue `<queue>.dlq` and retry queues `<queue>.retry.<ms>` are derived from it. */
  readonly queue: string;
  /** AMQP URL. Default `$ONCEFLOW_AMQP_URL`, else `amqp://guest:guest@127.0.0.1:5672`. */
  readonly url?: string | undefined;
  /**
   * `quorum` (replicated, delivery count in `x-delivery-count`), `classic` (durable, single node),
   * or `auto` (default): quorum on RabbitMQ 3.8 and newer, classic before.
   */
  readonly queueType?: 'auto' | 'quorum' | 'classic' | undefined;
  /**
   * Delay buckets for `retry({ delayMs })`, ascending, in ms. A retry waits in the smallest bucket
   * not shorter than `delayMs` (never early, up to the next bucket late); the largest is the
   * declared `maxDelayMs`. Default 50 ms … 1 h (`DEFAULT_RETRY_DELAYS_MS`).
   */
  readonly retryDelaysMs?: readonly number[] | undefined;
  /** Most publishes awaiting the broker's confirm at once, pipelined on one channel. Default 1024. */
  readonly maxUnconfirmed?: number | undefined;
  /**
   * The broker's `consumer_timeout` (ms): a delivery held longer than this closes its channel and
   * returns. Declared as `lock.maxMs`. Default 1 800 000 (RabbitMQ's default, 30 min).
   */
  readonly consumerTimeoutMs?: number | undefined;
  /** Largest encoded envelope `publish` accepts (bytes). Default 8 MiB (the broker allows 128 MiB). */
  readonly maxMessageBytes?: number | undefined;
  /** First reconnect delay after a lost connection (ms), doubling up to `reconnectMaxMs`. Default 100. */
  readonly reconnectMinMs?: number | undefined;
  /** Longest reconnect delay (ms). Default 5000. */
  readonly reconnectMaxMs?: number | undefined;
  /** Shown as the connection name in the management UI and `rabbitmqctl list_connections`. Default `onceflow`. */
  readonly connectionName?: string | undefined;
  /** Receives connection losses and undeliverable messages. Default: silent. */
  readonly logger?: Logger | undefined;
}

export type RabbitMqTransportConfig = Required<Omit<RabbitMqTransportOptions, 'url'>> & {
  readonly url: string;
};

export const defaultAmqpUrl = (): string =>
  process.env.ONCEFLOW_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

const positiveInt = (name: string, v: number | undefined, fallback: number): number => {
  const value = v ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(
      `invalid rabbitmq options: ${name} must be a positive integer, got ${value}`,
    );
  }
  return value;
};

/** Validates options and fills defaults, in this one place. Throws `ConfigError`. */
export function parseRabbitMqOptions(o: RabbitMqTransportOptions): RabbitMqTransportConfig {
  if (typeof o.queue !== 'string' || o.queue.length === 0 || o.queue.length > 200) {
    throw new ConfigError('invalid rabbitmq options: queue must be a name of 1..200 characters');
  }
  const queueType = o.queueType ?? 'auto';
  if (!['auto', 'quorum', 'classic'].includes(queueType)) {
    throw new ConfigError(`invalid rabbitmq options: queueType "${queueType}"`);
  }
  const delays = [...(o.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS)];
  delays.forEach((d, i) => {
    positiveInt(`retryDelaysMs[${i}]`, d, 1);
    if (i > 0 && d <= (delays[i - 1] ?? 0)) {
      throw new ConfigError('invalid rabbitmq options: retryDelaysMs must be strictly ascending');
    }
  });
  if (delays.length === 0)
    throw new ConfigError('invalid rabbitmq options: retryDelaysMs is empty');
  const reconnectMinMs = positiveInt('reconnectMinMs', o.reconnectMinMs, 100);
  const reconnectMaxMs = positiveInt('reconnectMaxMs', o.reconnectMaxMs, 5_000);
  if (reconnectMaxMs < reconnectMinMs) {
    throw new ConfigError('invalid rabbitmq options: reconnectMaxMs < reconnectMinMs');
  }
  return {
    queue: o.queue,
    url: o.url ?? defaultAmqpUrl(),
    queueType,
    retryDelaysMs: delays,
    maxUnconfirmed: positiveInt('maxUnconfirmed', o.maxUnconfirmed, 1024),
    consumerTimeoutMs: positiveInt('consumerTimeoutMs', o.consumerTimeoutMs, 1_800_000),
    maxMessageBytes: positiveInt('maxMessageBytes', o.maxMessageBytes, 8 * MiB),
    reconnectMinMs,
    reconnectMaxMs,
    connectionName: o.connectionName ?? 'onceflow',
    logger: o.logger ?? silentLogger,
  };
}
