import type { Inbox, ProcessedStore } from '@onceflow/core';
import { createCall } from './call.js';
import { defineInboxCommands } from './commands.js';
import { type RedisInboxConfig, resolveConfig } from './config.js';
import { createInboxMethods } from './inbox.js';
import { inboxKeys } from './keys.js';
import { createProcessedMethods } from './processed.js';

/**
 * The receiver's inbox and the worker's processed-guard over one Redis key space.
 *
 * `release(source, id, token)` serves both contracts: the token names the lease it gives up. A
 * claim token drops the pending claim (so the sender's retry is `new`); a processing token drops
 * the processing lease (so the next delivery can `begin`; the inbox claim stays). Tokens are random
 * UUIDs, so one never names both. A token that owns nothing releases nothing.
 */
export interface RedisInbox extends Inbox, ProcessedStore {
  release(source: string, id: string, token: string): Promise<void>;
  /** `{prefix}:`, the start of every key this store writes (one Redis Cluster hash tag). */
  readonly keyBase: string;
}

/**
 * Creates the store. No I/O here; the client stays yours (the store never quits it). Every method
 * is one atomic Lua script or command, safe to call concurrently from any number of processes;
 * every Redis failure, and any wait past `timeoutMs`, surfaces as `StoreUnavailableError` (503 at
 * the receiver, retry at the worker). Needs Redis 7 or later, with `maxmemory-policy noeviction`
 * and, for claims to survive a Redis crash, AOF (`appendfsync always`; see the README).
 *
 * @example
 * const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * const inbox = createRedisInbox({ redis, prefix: 'shop:inbox' });
 * const receiver = createReceiver({ inbox, transport, sources });
 */
export function createRedisInbox(config: RedisInboxConfig): RedisInbox {
  const resolved = resolveConfig(config);
  const call = createCall(resolved.redis, resolved.timeoutMs);
  const scripts = defineInboxCommands(resolved.redis);
  const keys = inboxKeys(resolved.prefix);
  const { retentionMs } = resolved;
  return {
    keyBase: keys.base,
    ...createInboxMethods({ call, scripts, keys, config: resolved }),
    ...createProcessedMethods({ call, scripts, keys, retentionMs }),
    async release(source, id, token) {
      const member = keys.member(source, id);
      await call('release', () =>
        scripts.release(
          keys.row(member),
          keys.claimLease(member),
          keys.workLease(member),
          keys.pending,
          keys.open,
          member,
          token,
          retentionMs,
        ),
      );
    },
  };
}
