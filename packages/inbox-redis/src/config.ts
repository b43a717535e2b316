import { DEFAULT_INBOX_RETENTION_MS } from '@onceflow/core';
import { parseConfig, type SameFields } from '@onceflow/core/kit';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

/** A standalone or cluster client: what the store needs of it. */
export type RedisClient = Redis | Cluster;

const isClient = (v: unknown): v is RedisClient =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<Redis>).defineCommand === 'function' &&
  typeof (v as Partial<Redis>).status === 'string';

const configSchema = z.object({
  redis: z.custom<RedisClient>(isClient, 'redis must be an ioredis Redis or Cluster client'),
  prefix: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^{}\s]+$/, 'prefix must not contain braces or whitespace')
    .default('onceflow:inbox'),
  retentionMs: z.number().int().positive().default(DEFAULT_INBOX_RETENTION_MS),
  timeoutMs: z.number().int().positive().default(2000),
  purgeBatchSize: z.number().int().min(1).max(10_000).default(500),
});

/** Configuration of `createRedisInbox`. */
export interface RedisInboxConfig {
  /**
   * The ioredis client (`Redis` or `Cluster`) the store talks through. Yours: the store never
   * quits it. The store adds its Lua scripts to it as commands (`defineCommand`).
   */
  readonly redis: RedisClient;
  /**
   * Names this inbox: every key is `{<prefix>}:…`, one Redis Cluster hash tag. Stores with
   * different prefixes share nothing. No braces or whitespace. Default `onceflow:inbox`.
   */
  readonly prefix?: string | undefined;
  /**
   * How long a record lives after its last state change, in ms (its key's TTL, set again at every
   * change). Received records (pending claims) and dead letters never expire; a dead letter gets
   * the TTL back when an operator redrives or discards it. Keep it at least the receiver's
   * `inboxRetentionMs`: the ids must outlive every sender's retry horizon. Every store on one
   * prefix must use the same value (`count` and index pruning rely on it). Default 4 days
   * (`DEFAULT_INBOX_RETENTION_MS`).
   */
  readonly retentionMs?: number | undefined;
  /**
   * Longest wait for Redis on one operation, in ms; past it, or at once while the client is
   * reconnecting, the operation rejects with `StoreUnavailableError` (503 at the receiver, retry at
   * the worker). The command may still run later; every operation is safe to repeat. Default 2000.
   */
  readonly timeoutMs?: number | undefined;
  /** Index entries looked at per purge script, so retention never blocks Redis long. Default 500. */
  readonly purgeBatchSize?: number | undefined;
}

// A type error the day the schema and the interface above differ.
const _configMatches: SameFields<z.input<typeof configSchema>, RedisInboxConfig> = true;

export type ResolvedRedisInboxConfig = z.infer<typeof configSchema>;

/** Validates and fills defaults in one spot. Throws `ConfigError`. */
export function resolveConfig(config: RedisInboxConfig): ResolvedRedisInboxConfig {
  return parseConfig('redis inbox config', configSchema, config);
}
