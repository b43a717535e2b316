import type { Logger } from '@onceflow/core';
import {
  loggerSchema,
  parseConfig,
  publishTimeoutSchema,
  type SameFields,
} from '@onceflow/core/kit';
import { z } from 'zod';

const HOUR = 3_600_000;

const positiveInt = z.number().int().positive();

/** The defaults of the per-queue settings, when `createEmbedded` does not set them. */
const TRANSPORT_DEFAULTS = {
  pollIntervalMs: 100,
  dedupeWindowMs: 24 * HOUR,
  lockMs: 30_000,
  maxMessageBytes: 16 * 1024 * 1024,
};

/** Per-queue settings; each field defaults to the value given to `createEmbedded`. */
const transportFields = (defaults: EmbeddedTransportConfig = TRANSPORT_DEFAULTS) => ({
  pollIntervalMs: positiveInt.default(defaults.pollIntervalMs),
  dedupeWindowMs: z
    .union([positiveInt, z.literal(Number.POSITIVE_INFINITY)])
    .default(defaults.dedupeWindowMs),
  lockMs: positiveInt.max(12 * HOUR).default(defaults.lockMs),
  maxMessageBytes: positiveInt.max(512 * 1024 * 1024).default(defaults.maxMessageBytes),
});

const transportSchema = (defaults: EmbeddedTransportConfig) =>
  z.object(transportFields(defaults)).strict();

const embeddedSchema = z
  .object({
    path: z.string().min(1),
    synchronous: z.enum(['full', 'normal']).default('full'),
    busyTimeoutMs: z.number().int().nonnegative().default(5000),
    publishTimeoutMs: publishTimeoutSchema,
    startTimeoutMs: z.number().int().nonnegative().default(30_000),
    purgeBatchSize: z.number().int().min(1).max(10_000).default(100),
    purgePauseRatio: z.number().min(0).max(1000).default(1),
    logger: loggerSchema.optional(),
    ...transportFields(),
  })
  .strict();

/** Options of `createEmbedded`. Only `path` is required. */
export interface EmbeddedOptions extends EmbeddedTransportOptions {
  /** The SQLite file holding inbox, processed marks, queues and dead letters. Created if absent. */
  readonly path: string;
  /**
   * `full` (default): every commit is fsynced, so what `publish`/`claim` confirmed survives a
   * power loss. `normal`: WAL is fsynced only at checkpoints; commits survive a process crash
   * but the last ones may roll back on power loss or an OS crash.
   */
  readonly synchronous?: 'full' | 'normal' | undefined;
  /** How long a statement waits for another connection's write lock before failing (ms). Default 5000. */
  readonly busyTimeoutMs?: number | undefined;
  /**
   * How long the receive path's writes (the inbox claim and a publish) wait for another
   * process's write lock, in ms: past it, or at once while the file is known locked, they fail
   * and the receiver answers 503 with `Retry-After`. SQLite waits synchronously (the process
   * does nothing else meanwhile), so keep it short. Default 500.
   */
  readonly publishTimeoutMs?: number | undefined;
  /**
   * How long `start()` keeps trying, with backoff, while another process holds the write lock
   * it needs (a migration is due, or the file is new), in ms; then it rejects with
   * `StoreUnavailableError`. A file that is up to date opens without the write lock. Default 30 000.
   */
  readonly startTimeoutMs?: number | undefined;
  /**
   * Records `inbox.purge` deletes per statement. SQLite runs each statement, its commit's sync
   * and any WAL checkpoint it causes on the process's event loop, so a batch stalls the claims
   * queued behind it for that long. Default 100.
   */
  readonly purgeBatchSize?: number | undefined;
  /**
   * After each purge batch, `inbox.purge` pauses this many times as long as the batch took
   * (0: back to back), leaving the event loop and the write lock to the claims; a purge then
   * runs about `1 + purgePauseRatio` times as long as its statements take. Default 1.
   */
  readonly purgePauseRatio?: number | undefined;
  /** Receives consumer-loop errors (a locked or failing database). Default: silent. */
  readonly logger?: Logger | undefined;
}

// A type error the day the schema and the interface above differ.
const _optionsMatches: SameFields<z.input<typeof embeddedSchema>, EmbeddedOptions> = true;

export type EmbeddedConfig = z.output<typeof embeddedSchema>;

/**
 * Per-queue settings of `embedded.transport(queue, options)`; each field defaults to the value
 * given to `createEmbedded` (where it is the default of every queue), else to the default below.
 */
export interface EmbeddedTransportOptions {
  /**
   * How often an idle consumer looks for messages published by other processes (ms). Messages
   * published through the same `createEmbedded` instance wake its consumers at once. Default 100.
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * How long a dedupe key is remembered after its message was acked (ms); it is
   * remembered for the whole time the message is queued as well. Declared as the transport's
   * `brokerDedupe.windowMs`. `Infinity` keeps every key forever. Default 24 h.
   */
  readonly dedupeWindowMs?: number | undefined;
  /**
   * Each delivery's lease (ms): redelivered with `attempt + 1` unless settled or renewed
   * (`renewLock` renews it for as long). Declared as `capabilities.lock.ms`. Default 30 000.
   */
  readonly lockMs?: number | undefined;
  /** Largest encoded envelope `publish` accepts (bytes). Default 16 MiB. */
  readonly maxMessageBytes?: number | undefined;
}

// A type error the day the schema and the interface above differ.
const _transportMatches: SameFields<
  z.input<ReturnType<typeof transportSchema>>,
  EmbeddedTransportOptions
> = true;

export interface EmbeddedTransportConfig {
  readonly pollIntervalMs: number;
  readonly dedupeWindowMs: number;
  readonly lockMs: number;
  readonly maxMessageBytes: number;
}

/** Validates `createEmbedded` options and fills defaults. Throws `ConfigError`. */
export function parseEmbeddedOptions(options: EmbeddedOptions): EmbeddedConfig {
  return parseConfig('embedded options', embeddedSchema, options);
}

/** Per-queue options over the instance's defaults. Throws `ConfigError`. */
export function parseTransportOptions(
  defaults: EmbeddedConfig,
  options: EmbeddedTransportOptions = {},
): EmbeddedTransportConfig {
  return parseConfig('embedded transport options', transportSchema(defaults), options);
}
