import { ConfigError } from '@onceflow/core';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DEFAULT_SCHEMA, DEFAULT_TABLE, identifierSchema, tableNameSchema } from './names.js';

const isPool = (v: unknown): v is Pool =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<Pool>).query === 'function' &&
  typeof (v as Partial<Pool>).connect === 'function';

const configSchema = z.object({
  pool: z.custom<Pool>(isPool, 'pool must be a pg.Pool'),
  schema: identifierSchema.default(DEFAULT_SCHEMA),
  table: tableNameSchema.default(DEFAULT_TABLE),
  purgeBatchSize: z.number().int().min(1).max(100_000).default(1000),
});

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
}

export type ResolvedPostgresInboxConfig = z.output<typeof configSchema>;

/** Validates and fills defaults in one spot. Throws `ConfigError`. */
export function resolveConfig(config: PostgresInboxConfig): ResolvedPostgresInboxConfig {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`);
    throw new ConfigError(`postgres inbox: ${issues.join('; ')}`);
  }
  return parsed.data;
}

const namesSchema = z.object({
  schema: identifierSchema.default(DEFAULT_SCHEMA),
  table: tableNameSchema.default(DEFAULT_TABLE),
});

/** Validates a location. Throws `ConfigError`. */
export function resolveLocation(location: InboxLocation = {}): { schema: string; table: string } {
  const parsed = namesSchema.safeParse(location);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`postgres inbox: ${issues.join('; ')}`);
  }
  return parsed.data;
}
