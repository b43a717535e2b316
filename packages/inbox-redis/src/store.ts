import type { HealthCheck, Inbox, InboxOutcomes, RecordStore, StoreIdentity } from '@onceflow/core';
import { createCall } from './call.js';
import { defineInboxCommands } from './commands.js';
import { type RedisInboxConfig, resolveConfig } from './config.js';
import { createInboxMethods } from './inbox.js';
import { inboxKeys } from './keys.js';
import { createListing } from './listing.js';
import { createRecordWrites } from './records.js';

/**
 * The receiver's inbox and the event record (the worker's guard, dead letters, the operator's
 * browsing) over one Redis key space: one hash per (source, id) holds the claim and the record.
 *
 * `markProcessed(source, id)` (`InboxOutcomes`) is for a receiver's inbox whose worker keeps its
 * record in another store (the worker's `inbox` option, e.g. PostgreSQL `records`): a received
 * or enqueued record becomes completed, so stats, the backlog gauges and `purge` see it done.
 *
 * `release(source, id, token)` serves both contracts: the token names the lease it gives up. A
 * claim token drops the pending claim (so the sender's retry is `new`); a processing token gives
 * the processing lease up unused (the record is enqueued again, the next delivery can `begin`).
 * Tokens are random UUIDs, so one never names both. A token that owns nothing releases nothing.
 */
export interface RedisInbox extends Inbox, RecordStore, InboxOutcomes, StoreIdentity, HealthCheck {
  release(source: string, id: string, token: string): Promise<void>;
  /**
   * `PING`, for readiness probes: rejects with `StoreUnavailableError` while the client is
   * reconnecting or Redis does not answer within `timeoutMs`.
   */
  check(signal?: AbortSignal): Promise<void>;
  /** `{prefix}:`, the start of every key this store writes (one Redis Cluster hash tag). */
  readonly keyBase: string;
  /** `redis:{prefix}:`: stores on one prefix share their rows (the server is not part of it). */
  readonly storeId: string;
}

/**
 * Creates the store. No I/O here; the client stays yours (the store never quits it). Every write
 * is one atomic Lua script, safe to call concurrently from any number of processes; a delivery
 * costs one round trip for `begin` and one for `complete`. Every Redis failure, and any wait past
 * `timeoutMs`, surfaces as `StoreUnavailableError` (503 at the receiver, retry at the worker).
 * Needs Redis 7 or later, with `maxmemory-policy noeviction` and, for claims and records to
 * survive a Redis crash, AOF (`appendfsync always`; see the README).
 *
 * @example
 * const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * const store = createRedisInbox({ redis, prefix: 'shop:inbox' });
 * const receiver = createReceiver({ inbox: store, transport, sources });
 */
export function createRedisInbox(config: RedisInboxConfig): RedisInbox {
  const resolved = resolveConfig(config);
  const { redis, retentionMs } = resolved;
  const call = createCall(redis, resolved.timeoutMs);
  const scripts = defineInboxCommands(redis);
  const keys = inboxKeys(resolved.prefix);
  return {
    keyBase: keys.base,
    storeId: `redis:${keys.base}`,
    async check() {
      await call('check', () => redis.ping());
    },
    ...createInboxMethods({ call, scripts, keys, config: resolved }),
    ...createRecordWrites({ call, scripts, keys, retentionMs }),
    ...createListing({ call, scripts, keys, retentionMs }),
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
          keys.base,
        ),
      );
    },
  };
}
