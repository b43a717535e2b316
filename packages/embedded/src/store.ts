import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { HealthCheck, Inbox, InboxOutcomes, RecordStore, StoreIdentity } from '@onceflow/core';
import type { EmbeddedConfig } from './config.js';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';
import { createSqliteInbox } from './inbox.js';
import { createSqliteRecordStore } from './records.js';

/**
 * The receiver's inbox and the event record on one table (one row per (source, id)), as one
 * object: hand it to the receiver as `Inbox` and to the worker, the CLI and your tools as
 * `RecordStore`, so the claim and every attempt land on the same record.
 *
 * `markProcessed` (`InboxOutcomes`) is for the shape where the worker keeps its record in another
 * store (its `inbox` option): a received or enqueued event becomes completed.
 *
 * `release` serves both interfaces: it gives up whatever the token owns, a pending claim (a
 * `received` record goes, so the next claim is `new`) or a processing lease (back to
 * `enqueued`). Tokens are random, so a token never owns both.
 */
export interface EmbeddedStore
  extends Inbox,
    RecordStore,
    InboxOutcomes,
    StoreIdentity,
    HealthCheck {
  release(source: string, id: string, token: string): Promise<void>;
  /**
   * Claim-check: `get(source, id)` returns the claimed envelope in every state until retention
   * purges the record, so a receiver and a worker with `claimCheck` accept this store.
   */
  readonly keepsEnvelopes: true;
  /** `sqlite:<absolute path of the file>`: every process opening the file shares its rows. */
  readonly storeId: string;
  /**
   * `SELECT 1` on the file's connection (opening it if needed), for readiness probes: rejects
   * with `StoreUnavailableError` once the instance is closed or the file cannot be opened.
   */
  check(signal?: AbortSignal): Promise<void>;
}

export function createEmbeddedStore(
  handle: DatabaseHandle,
  config: Pick<EmbeddedConfig, 'path' | 'purgeBatchSize' | 'purgePauseRatio'>,
): EmbeddedStore {
  const inbox = createSqliteInbox(handle, {
    batchSize: config.purgeBatchSize,
    pauseRatio: config.purgePauseRatio,
  });
  const { releaseLease, ...records } = createSqliteRecordStore(handle);
  return {
    ...inbox,
    ...records,
    keepsEnvelopes: true,
    // An in-memory database is its connection's own: no other store shares it.
    storeId: `sqlite:${config.path === ':memory:' ? `:memory:${randomUUID()}` : resolve(config.path)}`,
    async release(source, id, token) {
      if (!(await releaseLease(source, id, token))) await inbox.release(source, id, token);
    },
    check: () => asStore('check', () => void handle.stmt('SELECT 1').get()),
  };
}
