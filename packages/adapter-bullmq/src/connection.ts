import { backoffDelay, type Logger, type RetryPolicy } from '@onceflow/core';
import { Redis, type RedisOptions } from 'ioredis';

/** Reconnect delays: a ceiling of 100 ms doubling up to 2 s, full jitter. */
const RECONNECT: RetryPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
  jitter: 'full',
};

/**
 * One ioredis connection for BullMQ. `publisher`: commands fail at once while Redis is
 * unreachable (no offline queue), so `publish` rejects with `TransportUnavailableError` instead
 * of hanging and the receiver answers 503. `worker`: commands wait for the reconnect
 * (`maxRetriesPerRequest: null`, which BullMQ requires of worker connections). Both reconnect on
 * their own after a Redis restart, with exponential backoff and full jitter (core's `backoffDelay`,
 * at most 2 s apart) unless `options.retryStrategy` says otherwise.
 * Connection errors go to `logger` once per outage, not once per retry.
 */
export function openRedis(
  url: string,
  options: RedisOptions,
  role: 'publisher' | 'worker',
  logger: Logger | undefined,
): Redis {
  const roleOptions: RedisOptions =
    role === 'publisher'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1 }
      : { maxRetriesPerRequest: null };
  const client = new Redis(url, {
    retryStrategy: (times) => backoffDelay(times, RECONNECT),
    ...options,
    ...roleOptions,
  });
  let reported = false;
  client.on('error', (err: unknown) => {
    if (reported) return;
    reported = true;
    logger?.warn({ err, role }, 'bullmq transport: Redis connection error; reconnecting');
  });
  client.on('ready', () => {
    if (reported) logger?.info({ role }, 'bullmq transport: Redis connection ready again');
    reported = false;
  });
  return client;
}
