import { parseConfig, type SameFields } from '@onceflow/core/kit';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DEFAULT_SCHEMA, DEFAULT_TABLE, identifierSchema, tableNameSchema } from './names.js';

const isPool = (v: unknown): v is Pool =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<Pool>).query === 'function' &&
  typeof (v as Partial<Pool>).connect === 'function';

/** `purgePauseRatio` unless configured: retention deletes for at most a fifth of its run. */
export const DEFAULT_PURGE_PAUSE_RATIO = 4;

const configSchema = z.object({
  pool: z.custom<Pool>(isPool, 'pool must be a pg.Pool'),
  schema: identifierSchema.default(DEFAULT_SCHEMA),
  table: tableNameSchema.default(DEFAULT_TABLE),
  purgeBatchSize: z.number().int().min(1).max(100_000).default(1000),
  purgePauseRatio: z.number().min(0).max(1000).default(DEFAULT_PURGE_PAUSE_RATIO),
  batching: z
    .union([
      z.literal(false),
      z.strictObject({
        maxBatch: z.number().int().min(1).max(10_000).optional(),
        maxInFlight: z.number().int().min(1).max(1000).optional(),
      }),
    ])
    .default({}),
});

/** Callers per batch statement unless configured. */
const DEFAULT_MAX_BATCH = 256;
/** pg's own default pool size, for a pool that does not say. */
const PG_DEFAULT_POOL_MAX = 10;

/** Where an inbox lives; shared by `migrate` and `markProcessed`. */
export interface InboxLocation {
  /** Default `public`. */
  readonly schema?: string | undefined;
  /** Default `onceflow_inbox`. */
  readonly table?: string | undefined;
}

/** Configuration of `createPostgresInbox`. */
export interface PostgresInboxConfig extends InboxLocation {
  /** The pool the store queries through. Yours: the store never ends it. */
  readonly pool: Pool;
  /** Rows deleted per statement by `purge`, so retention never holds long locks. Default 1000. */
  readonly purgeBatchSize?: number | undefined;
  /**
   * Paces `purge`: after each batch it pauses this many times as long as the batch took, so
   * retention spends at most `1 / (1 + purgePauseRatio)` of its run deleting and leaves the rest
   * of the database's time (its WAL, its writes to disk) to the claims. A busy database makes
   * batches slower and so the pauses longer. 0: batches back to back, fastest, and the claims
   * running beside it pay for it. Default 4 (a fifth of the time spent deleting).
   */
  readonly purgePauseRatio?: number | undefined;
  /**
   * Natural batching of the two statements every webhook runs (claim's insert, `markEnqueued`):
   * while `maxInFlight` statements of one kind run, further callers queue and go together, up
   * to `maxBatch` per statement, when one finishes. Nothing waits when the store is idle; every
   * caller keeps its own answer and error. Defaults: `maxBatch` 256, `maxInFlight` half the
   * pool's `max` (at least 1), so claims and marks together use at most the pool, as one
   * statement per call would. Fewer slots queue callers behind each statement's commit well
   * below the maximum rate.
   * `false`: one statement per call.
   */
  readonly batching?:
    | { readonly maxBatch?: number | undefined; readonly maxInFlight?: number | undefined }
    | false
    | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof configSchema>, PostgresInboxConfig> = true;

export interface ResolvedPostgresInboxConfig {
  readonly pool: Pool;
  readonly schema: string;
  readonly table: string;
  readonly purgeBatchSize: number;
  readonly purgePauseRatio: number;
  readonly batching: { readonly maxBatch: number; readonly maxInFlight: number } | false;
}

/** Validates and fills defaults in one spot. Throws `ConfigError`. */
export function resolveConfig(config: PostgresInboxConfig): ResolvedPostgresInboxConfig {
  const { batching, ...rest } = parseConfig('postgres inbox config', configSchema, config);
  if (batching === false) return { ...rest, batching };
  const poolMax = rest.pool.options?.max ?? PG_DEFAULT_POOL_MAX;
  return {
    ...rest,
    batching: {
      maxBatch: batching.maxBatch ?? DEFAULT_MAX_BATCH,
      maxInFlight: batching.maxInFlight ?? Math.max(1, Math.floor(poolMax / 2)),
    },
  };
}

const namesSchema = z.object({
  schema: identifierSchema.default(DEFAULT_SCHEMA),
  table: tableNameSchema.default(DEFAULT_TABLE),
});

/** Validates a location. Throws `ConfigError`. */
export function resolveLocation(location: InboxLocation = {}): { schema: string; table: string } {
  return parseConfig('postgres inbox location', namesSchema, location);
}
