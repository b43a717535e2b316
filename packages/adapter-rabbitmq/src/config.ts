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

/** Default delay buckets (ms): a retry waits in the smallest bucket at least as long as asked. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  50, 100, 250, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  1_800_000, 3_600_000,
];

export const defaultAmqpUrl = (): string =>
  process.env.ONCEFLOW_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

const positiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const optionsSchema = z
  .object({
    queue: z.string().min(1).max(200),
    url: z.string().min(1).optional(),
    queueType: z.enum(['auto', 'quorum', 'classic']).default('auto'),
    retryDelaysMs: z
      .array(positiveInt)
      .min(1)
      .readonly()
      .refine(
        (d) => d.every((ms, i) => i === 0 || ms > (d[i - 1] ?? 0)),
        'must be strictly ascending',
      )
      .default(() => [...DEFAULT_RETRY_DELAYS_MS]),
    maxUnconfirmed: positiveInt.default(1024),
    publishTimeoutMs: publishTimeoutSchema,
    lockMs: positiveInt.default(30_000),
    deliveryLimit: z.number().int().min(1).max(1_000_000).default(20),
    wireFormat: wireFormatSchema,
    maxMessageBytes: positiveInt.default(8 * MiB),
    reconnectMinMs: positiveInt.default(100),
    reconnectMaxMs: positiveInt.default(5_000),
    connectionName: z.string().min(1).default('onceflow'),
    logger: loggerSchema.default(() => silentLogger),
  })
  .strict()
  .refine((o) => o.reconnectMaxMs >= o.reconnectMinMs, {
    message: 'must be at least reconnectMinMs',
    path: ['reconnectMaxMs'],
  });

/** Options of `createRabbitMqTransport`. Only `queue` is required. */
export interface RabbitMqTransportOptions {
  /**
   * The work queue. The dead-letter queue `<queue>.dlq` and the retry queues `<queue>.retry.<ms>`
   * and `<queue>.dlq.retry.<ms>` are derived from it.
   */
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
   * Longest a `publish` waits for the broker's confirms, in ms: past it, or at once while the
   * broker is known down, it rejects with `TransportUnavailableError` and the receiver answers
   * 503 with `Retry-After`. Default 500.
   */
  readonly publishTimeoutMs?: number | undefined;
  /**
   * The worker's processing lease (ms), declared as `lock.ms`. RabbitMQ's lock is the consumer
   * channel's: a delivery is held while its channel lives, with nothing to renew, so this bounds
   * only how long another worker waits on the event record after this one stops renewing.
   * Default 30 000.
   */
  readonly lockMs?: number | undefined;
  /**
   * Deliveries after which a message moves to `<queue>.dlq` instead of being delivered again
   * (a handler that keeps retrying, a consumer that keeps crashing, a store that was down),
   * declared as `deliveryLimit`; the worker reads it back from there into the event record.
   * Keep it above the worker's `retry.maxAttempts`. On quorum queues it is also the queue's
   * `x-delivery-limit`, fixed when the queue is declared. Default 20.
   */
  readonly deliveryLimit?: number | undefined;
  /** Largest encoded envelope `publish` accepts (bytes). Default 8 MiB (the broker allows 128 MiB). */
  readonly maxMessageBytes?: number | undefined;
  /**
   * Ceiling of the first reconnect delay after a lost connection (ms), doubling up to
   * `reconnectMaxMs`; each delay is drawn below its ceiling (full jitter). Default 100.
   */
  readonly reconnectMinMs?: number | undefined;
  /** Highest reconnect delay ceiling (ms), at least `reconnectMinMs`. Default 5000. */
  readonly reconnectMaxMs?: number | undefined;
  /** Shown as the connection name in the management UI and `rabbitmqctl list_connections`. Default `onceflow`. */
  readonly connectionName?: string | undefined;
  /**
   * What messages carry: `onceflow` (the default: wire format v1 as the body) or
   * `cloudevents-binary` (the CloudEvents AMQP binding's binary mode: `cloudEvents_*` headers,
   * `content_type` = datacontenttype, the payload as the body), which any CloudEvents consumer
   * reads. Retries and dead letters keep it; consumers read both, whatever is set here.
   */
  readonly wireFormat?: WireFormat | undefined;
  /** Receives connection losses and settlements that could not be recorded. Default: silent. */
  readonly logger?: Logger | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof optionsSchema>, RabbitMqTransportOptions> = true;

export type RabbitMqTransportConfig = z.output<typeof optionsSchema> & { readonly url: string };

/** Validates options and fills defaults, in this one place. Throws `ConfigError` naming every bad field. */
export function parseRabbitMqOptions(options: RabbitMqTransportOptions): RabbitMqTransportConfig {
  const config = parseConfig('rabbitmq options', optionsSchema, options);
  return { ...config, url: config.url ?? defaultAmqpUrl() };
}
