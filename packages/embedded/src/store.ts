import type { Inbox, ProcessedStore } from '@onceflow/core';
import type { DatabaseHandle } from './database.js';
import { createSqliteInbox } from './inbox.js';
import { createSqliteProcessedStore } from './processed.js';

/**
 * The receiver's inbox and the worker's processed-guard on one table (one row per (source, id)),
 * as one object: hand it to the receiver as `Inbox` and to the worker as `ProcessedStore`.
 *
 * `release` serves both interfaces: it gives up whatever the token owns, a pending claim (the row
 * goes, the next claim is `new`) or a processing lease (the inbox state is kept). Tokens are
 * random, so a token never owns both.
 */
export interface EmbeddedInbox extends Inbox, ProcessedStore {
  release(source: string, id: string, token: string): Promise<void>;
}

export function createEmbeddedInbox(handle: DatabaseHandle): EmbeddedInbox {
  const inbox = createSqliteInbox(handle);
  const processed = createSqliteProcessedStore(handle);
  return {
    ...inbox,
    ...processed,
    async release(source, id, token) {
      await inbox.release(source, id, token);
      await processed.release(source, id, token);
    },
  };
}
