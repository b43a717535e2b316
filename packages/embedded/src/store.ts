import type { Inbox, RecordStore } from '@onceflow/core';
import type { DatabaseHandle } from './database.js';
import { createSqliteInbox } from './inbox.js';
import { createSqliteRecordStore } from './records.js';

/**
 * The receiver's inbox and the event record on one table (one row per (source, id)), as one
 * object: hand it to the receiver as `Inbox` and to the worker, the CLI and your tools as
 * `RecordStore`, so the claim and every attempt land on the same record.
 *
 * `release` serves both interfaces: it gives up whatever the token owns, a pending claim (a
 * `received` record goes, so the next claim is `new`) or a processing lease (back to
 * `enqueued`). Tokens are random, so a token never owns both.
 */
export interface EmbeddedStore extends Inbox, RecordStore {
  release(source: string, id: string, token: string): Promise<void>;
}

export function createEmbeddedStore(handle: DatabaseHandle): EmbeddedStore {
  const inbox = createSqliteInbox(handle);
  const { releaseLease, ...records } = createSqliteRecordStore(handle);
  return {
    ...inbox,
    ...records,
    async release(source, id, token) {
      if (!(await releaseLease(source, id, token))) await inbox.release(source, id, token);
    },
  };
}
