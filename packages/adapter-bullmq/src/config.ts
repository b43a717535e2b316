import { ConfigError, type Logger } from '@onceflow/core';
import type { RedisOptions } from 'ioredis';

/** Configuration of `createBullmqTransport`. */
export interface BullmqTransportConfig {
  /** Redis URL (`redis://`, `rediss://`). Default `redis://127.0.0.1:6379`. */
  readonly url?: string | undefined;
  /** The BullMQ queue name (no `:`). */
  readonly queue: string;
  /** BullMQ key prefix (no `:`). Default `onceflow`. */
  readonly prefix?: string | undefined;
  /** The dead-letter queue's name. Default `<queue>-dead-letters`. */
  readonly deadLetterQueue?: string | undefined;
  /**
   * How long a finished job (and so its `jobId`) is kept: the broker dedupe window, declared as
   * `capabilities.brokerDedupe.windowMs`. Passed to BullMQ as `removeOnComplete`/`removeOnFail`
   * `{ age }`. Default 1 hour; at least 1 s.
   */
  readonly dedupeWindowMs?: number | undefined;
  /** Longest lock `consume` or `extendLock` may ask for (`capabilities.lock.maxMs`). Default 1 hour. */
  readonly maxLockMs?: number | undefined;
  /** Largest encoded envelope accepted by `publish`, in bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number | undefined;
  /**
   * How often a consumer looks for jobs whose lock expired (BullMQ `stalledInterval`). Default
   * `min(lockMs, 30 s)`: a job is redelivered between one and two intervals after its lock expired.
   */
  readonly stalledIntervalMs?: number | undefined;
  /**
   * BullMQ `maxStalledCount`: after this many lock expiries BullMQ itself fails the job (to its
   * failed set, not the dead-letter queue). Default 1,000,000, so that the worker's `maxAttempts`
   * decides instead (it dead-letters a delivery whose attempt is over the limit).
   */
  readonly maxStalledCount?: number | undefined;
  /** Extra ioredis options (password, TLS, …) merged over those parsed from `url`. */
  readonly redis?: RedisOptions | undefined;
  /** Receives connection errors and settlements that could not be recorded. */
  readonly logger?: Logger | undefined;
}

export interface ResolvedBullmqConfig {
  readonly url: string;
  readonly queue: string;
  readonly prefix: string;
  readonly deadLetterQueue: string;
  readonly dedupeWindowMs: number;
  readonly maxLockMs: number;
  readonly maxMessageBytes: number;
  readonly stalledIntervalMs: number | undefined;
  readonly maxStalledCount: number;
  readonly redis: RedisOptions;
  readonly logger: Logger | undefined;
}

// Hand-written rather than zod: this package has no zod dependency (see the README).
function validator() {
  const problems: string[] = [];
  return {
    problems,
    name(field: string, value: unknown): string {
      // BullMQ names its Redis keys `<prefix>:<queue>:…`, so neither may contain a colon.
      if (typeof value !== 'string' || value.length === 0 || value.includes(':')) {
        problems.push(`${field} must be a non-empty string without ":"`);
      }
      return String(value);
    },
    int(field: string, value: unknown, min: number, fallback: number): number {
      const v = value ?? fallback;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
        problems.push(`${field} must be an integer >= ${min}`);
      }
      return Number(v);
    },
  };
}

/** Applies defaults; throws `ConfigError` naming every invalid field. */
export function parseBullmqConfig(config: BullmqTransportConfig): ResolvedBullmqConfig {
  const v = validator();
  const queue = v.name('queue', config.queue);
  const url = config.url ?? 'redis://127.0.0.1:6379';
  if (typeof url !== 'string' || url === '') v.problems.push('url must be a non-empty string');
  const resolved: ResolvedBullmqConfig = {
    url,
    queue,
    prefix: v.name('prefix', config.prefix ?? 'onceflow'),
    deadLetterQueue: v.name('deadLetterQueue', config.deadLetterQueue ?? `${queue}-dead-letters`),
    dedupeWindowMs: v.int('dedupeWindowMs', config.dedupeWindowMs, 1_000, 3_600_000),
    maxLockMs: v.int('maxLockMs', config.maxLockMs, 1, 3_600_000),
    maxMessageBytes: v.int('maxMessageBytes', config.maxMessageBytes, 1, 4 * 1024 * 1024),
    stalledIntervalMs:
      config.stalledIntervalMs === undefined
        ? undefined
        : v.int('stalledIntervalMs', config.stalledIntervalMs, 1, 0),
    maxStalledCount: v.int('maxStalledCount', config.maxStalledCount, 0, 1_000_000),
    redis: config.redis ?? {},
    logger: config.logger,
  };
  if (resolved.queue === resolved.deadLetterQueue) {
    v.problems.push('deadLetterQueue must differ from queue');
  }
  if (v.problems.length > 0) {
    throw new ConfigError(`invalid BullMQ transport config: ${v.problems.join('; ')}`);
  }
  return resolved;
}
