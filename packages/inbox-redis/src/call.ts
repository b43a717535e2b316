import { OnceflowError, StoreUnavailableError } from '@onceflow/core';
import type { RedisClient } from './config.js';

/** Client states in which a command would only wait in ioredis's offline queue. */
const DOWN = new Set(['reconnecting', 'close', 'end']);

/** Runs one Redis operation for the store: bounded in time, every failure a store error. */
export type Call = <T>(operation: string, run: () => Promise<T>) => Promise<T>;

/**
 * Fails fast while the client is reconnecting, bounds every operation by `timeoutMs`, and turns
 * anything ioredis throws (connection lost, timeouts, replies such as OOM) into a
 * `StoreUnavailableError` keeping the original as `cause`: the receiver answers 503 and the
 * worker retries. onceflow's own errors pass through unchanged.
 */
export function createCall(redis: RedisClient, timeoutMs: number): Call {
  const unavailable = (operation: string, reason: string, cause?: unknown) =>
    new StoreUnavailableError(`redis inbox: ${operation} failed: ${reason}`, { cause });
  return async (operation, run) => {
    if (DOWN.has(redis.status)) throw unavailable(operation, `client is ${redis.status}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(unavailable(operation, `no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([run(), timeout]);
    } catch (err) {
      if (err instanceof OnceflowError) throw err;
      const reason = err instanceof Error ? err.message || err.name : String(err);
      throw unavailable(operation, reason, err);
    } finally {
      clearTimeout(timer);
    }
  };
}
