import { loggerSchema, parseConfig } from '@onceflow/core/kit';
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
    /** Redis URL (`redis://`, `rediss://`). Default `redis://127.0.0.1:6379`. */
    url: z.string().min(1).default('redis://127.0.0.1:6379'),
    /** The BullMQ queue name (no `:`). */
    queue: keyPart,
    /** BullMQ key prefix (no `:`). Default `onceflow`. */
    prefix: keyPart.default('onceflow'),
    /** The dead-letter queue's name (no `:`, not `queue`). Default `<queue>-dead-letters`. */
    deadLetterQueue: keyPart.optional(),
    /**
     * How long a finished job (and so its `jobId`) is kept: the broker dedupe window, declared as
     * `capabilities.brokerDedupe.windowMs`. Passed to BullMQ as `removeOnComplete`/`removeOnFail`
     * `{ age }`. Default 1 hour; at least 1 s.
     */
    dedupeWindowMs: z.number().int().min(1_000).default(HOUR),
    /** Longest lock `consume` or `extendLock` may ask for (`capabilities.lock.maxMs`). Default 1 hour. */
    maxLockMs: z.number().int().positive().default(HOUR),
    /** Largest encoded envelope accepted by `publish`, in bytes. Default 4 MiB. */
    maxMessageBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024),
    /**
     * How often a consumer looks for jobs whose lock expired (BullMQ `stalledInterval`). Default
     * `min(lockMs, 30 s)`: a job is redelivered between one and two intervals after its lock expired.
     */
    stalledIntervalMs: z.number().int().positive().optional(),
    /**
     * BullMQ `maxStalledCount`: after this many lock expiries BullMQ itself fails the job (to its
     * failed set, not the dead-letter queue). Default 1,000,000, so that the worker's `maxAttempts`
     * decides instead (it dead-letters a delivery whose attempt is over the limit).
     */
    maxStalledCount: z.number().int().nonnegative().default(1_000_000),
    /** Extra ioredis options (password, TLS, …) merged over those parsed from `url`. */
    redis: z
      .custom<RedisOptions>((v) => typeof v === 'object' && v !== null, 'must be an object')
      .default({}),
    /** Receives connection errors and settlements that could not be recorded. Default: silent. */
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
export type BullmqTransportConfig = z.input<typeof configSchema>;
export type ResolvedBullmqConfig = z.output<typeof configSchema>;

/** Validates and fills defaults. Throws `ConfigError` naming every invalid field. */
export function parseBullmqConfig(config: BullmqTransportConfig): ResolvedBullmqConfig {
  return parseConfig('BullMQ transport config', configSchema, config);
}
