import { ConfigError, type Logger } from '@onceflow/core';
import { z } from 'zod';

const HOUR = 3_600_000;

const positiveMs = z.number().int().positive();

/** Per-queue settings; each field defaults to the value given to `createEmbedded`. */
const transportFields = {
  /**
   * How often an idle consumer looks for messages published by other processes (ms). Messages
   * published through the same `createEmbedded` instance wake its consumers at once. Default 100.
   */
  pollIntervalMs: positiveMs.default(100),
  /**
   * How long a dedupe key is remembered after its message was acked or dead-lettered (ms); it is
   * remembered for the whole time the message is queued as well. Declared as the transport's
   * `brokerDedupe.windowMs`. `Infinity` keeps every key forever. Default 24 h.
   */
  dedupeWindowMs: z.union([positiveMs, z.literal(Number.POSITIVE_INFINITY)]).default(24 * HOUR),
  /** The longest lock one `consume` or `extendLock` may ask for (ms). Default 12 h. */
  maxLockMs: positiveMs.default(12 * HOUR),
  /** Largest encoded envelope `publish` accepts (bytes). Default 16 MiB. */
  maxMessageBytes: positiveMs.max(512 * 1024 * 1024).default(16 * 1024 * 1024),
};

const transportSchema = z.object(transportFields).strict();

const embeddedSchema = z
  .object({
    /** The SQLite file holding inbox, processed marks, queues and dead letters. Created if absent. */
    path: z.string().min(1),
    /**
     * `full` (default): every commit is fsynced, so what `publish`/`claim` confirmed survives a
     * power loss. `normal`: WAL is fsynced only at checkpoints; commits survive a process crash
     * but the last ones may roll back on power loss or an OS crash.
     */
    synchronous: z.enum(['full', 'normal']).default('full'),
    /** How long a statement waits for another connection's write lock before failing (ms). Default 5000. */
    busyTimeoutMs: z.number().int().nonnegative().default(5000),
    /** Receives consumer-loop errors (a locked or failing database). Default: silent. */
    logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null).optional(),
    ...transportFields,
  })
  .strict();

/** Options of `createEmbedded`. Only `path` is required. */
export type EmbeddedOptions = z.input<typeof embeddedSchema>;
export type EmbeddedConfig = z.output<typeof embeddedSchema>;

/** Options of `embedded.transport(queue, options)`, overriding the instance's defaults. */
export type EmbeddedTransportOptions = Partial<z.input<typeof transportSchema>>;
export type EmbeddedTransportConfig = z.output<typeof transportSchema>;

function fail(what: string, error: z.ZodError): never {
  throw new ConfigError(`${what}: ${z.prettifyError(error)}`);
}

/** Validates `createEmbedded` options and fills defaults. Throws `ConfigError`. */
export function parseEmbeddedOptions(options: EmbeddedOptions): EmbeddedConfig {
  const parsed = embeddedSchema.safeParse(options);
  return parsed.success ? parsed.data : fail('invalid embedded options', parsed.error);
}

/** Per-queue options over the instance's defaults. Throws `ConfigError`. */
export function parseTransportOptions(
  defaults: EmbeddedConfig,
  options: EmbeddedTransportOptions = {},
): EmbeddedTransportConfig {
  const parsed = transportSchema.safeParse({
    pollIntervalMs: defaults.pollIntervalMs,
    dedupeWindowMs: defaults.dedupeWindowMs,
    maxLockMs: defaults.maxLockMs,
    maxMessageBytes: defaults.maxMessageBytes,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  });
  return parsed.success ? parsed.data : fail('invalid embedded transport options', parsed.error);
}
