import type { Logger } from '@onceflow/core';
import {
  loggerSchema,
  parseConfig,
  publishTimeoutSchema,
  type SameFields,
} from '@onceflow/core/kit';
import type { RedisOptions } from 'ioredis';
import { z } from 'zod';

const HOUR = 3_600_000;

/** BullMQ names its Redis keys `<prefix>:<queue>:…`, so neither part may contain a colon. */
const keyPart = z
  .string()
  .min(1)
  .regex(/^[^:]+$/, 'must not contain ":"');

const configSchema = z
  .object({
    url: z.string().min(1).default('redis://127.0.0.1:6379'),
    queue: keyPart,
    prefix: keyPart.default('onceflow'),
    deadLetterQueue: keyPart.optional(),
    dedupeWindowMs: z.number().int().min(1_000).default(HOUR),
    lockMs: z.number().int().positive().default(30_000),
    deliveryLimit: z.number().int().positive().default(20),
    maxMessageBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024),
    stalledIntervalMs: z.number().int().positive().optional(),
    redis: z
      .custom<RedisOptions>((v) => typeof v === 'object' && v !== null, 'must be an object')
      .default({}),
    publishTimeoutMs: publishTimeoutSchema,
    logger: loggerSchema.optional(),
  })
  .transform(({ deadLetterQueue, ...rest }) => ({
    ...rest,
    deadLetterQueue: deadLetterQueue ?? `${rest.queue}-dead-letters`,
  }))
  .refine((c) => c.deadLetterQueue !== c.queue, {
    message: 'must differ from queue',
    path: ['deadLetterQueue'],
  });

/** Configuration of `createBullmqTransport` and `deleteBullmqQueue`. Only `queue` is required. */
export interface BullmqTransportConfig {
  /** Redis URL (`redis://`, `rediss://`). Default `redis://127.0.0.1:6379`. */
  readonly url?: string | undefined;
  /** The BullMQ queue name (no `:`). */
  readonly queue: string;
  /** BullMQ key prefix (no `:`). Default `onceflow`. */
  readonly prefix?: string | undefined;
  /**
   * The dead-letter queue, where jobs go past `deliveryLimit` (no `:`, not `queue`). Default
   * `<queue>-dead-letters`.
   */
  readonly deadLetterQueue?: string | undefined;
  /**
   * How long a finished job (and so its `jobId`) is kept: the broker dedupe window, declared as
   * `capabilities.brokerDedupe.windowMs`. Passed to BullMQ as `removeOnComplete`/`removeOnFail`
   * `{ age }`. Default 1 hour; at least 1 s.
   */
  readonly dedupeWindowMs?: number | undefined;
  /**
   * Each job's lock (BullMQ `lockDuration`), in ms, declared as `capabilities.lock.ms`: a job
   * neither settled nor renewed (`renewLock`, for `lockMs` again) within it is redelivered with
   * `attempt + 1`. Default 30 000.
   */
  readonly lockMs?: number | undefined;
  /**
   * After this many deliveries (retries and lock expiries alike: BullMQ's `attemptsStarted`)
   * a job moves to the dead-letter queue, read back with `consumeDeadLetters`, instead of being
   * delivered again. Declared as `capabilities.deliveryLimit`; keep it above the worker's
   * `retry.maxAttempts`. Default 20.
   */
  readonly deliveryLimit?: number | undefined;
  /** Largest encoded envelope accepted by `publish`, in bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number | undefined;
  /**
   * How often a consumer looks for jobs whose lock expired (BullMQ `stalledInterval`). Default
   * `min(lockMs, 30 s)`: a job is redelivered between one and two intervals after its lock expired.
   */
  readonly stalledIntervalMs?: number | undefined;
  /** Extra ioredis options (password, TLS, …) merged over those parsed from `url`. */
  readonly redis?: RedisOptions | undefined;
  /**
   * Longest a `publish` waits for Redis, in ms: past it, or at once while Redis is known down,
   * it rejects with `TransportUnavailableError` and the receiver answers 503 with `Retry-After`.
   * Default 500.
   */
  readonly publishTimeoutMs?: number | undefined;
  /** Receives connection errors and settlements that could not be recorded. Default: silent. */
  readonly logger?: Logger | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof configSchema>, BullmqTransportConfig> = true;

export type ResolvedBullmqConfig = z.output<typeof configSchema>;

/** Validates and fills defaults. Throws `ConfigError` naming every invalid field. */
export function parseBullmqConfig(config: BullmqTransportConfig): ResolvedBullmqConfig {
  return parseConfig('BullMQ transport config', configSchema, config);
}
