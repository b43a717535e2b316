import { RECORD_COLUMNS, RECORD_INDEXES } from './record-migration.js';

/** Every column of the record, copied as it is. */
const COPIED = `source, id, state, processing_token, processing_expires_at, claim_token,
    claim_expires_at, claimed_at, payload_hash, received_at, updated_at, attempts, next_attempt_at,
    type, ordering_key, consumer, trace_id, reason, last_error, history, envelope`;

/**
 * Schema version 5: `onceflow_inbox` becomes a rowid table, its `(source, id)` key a unique index.
 * A `WITHOUT ROWID` table keeps at most about a quarter of a page of each row in its b-tree and
 * spills the rest into an overflow page of its own, so a record over about 1 KB (its envelope
 * and history) took a whole 4 KB page beside its entry; a rowid table keeps it in its leaf, and
 * retention frees about a third of the pages per record. The rows are copied in the order
 * they were received, as new ones are appended, so a purge of the oldest day frees neighbouring
 * pages. Rebuilt in the migration's transaction (time linear in its rows, under the write lock:
 * other processes wait up to their busy timeout). Columns and indexes are those of version 2.
 */
export const ROWID_MIGRATION = `
  CREATE TABLE onceflow_inbox_v5 (
${RECORD_COLUMNS}    UNIQUE (source, id)
  );

  INSERT INTO onceflow_inbox_v5 (${COPIED})
  SELECT ${COPIED}
  FROM onceflow_inbox ORDER BY received_at;

  DROP TABLE onceflow_inbox;
  ALTER TABLE onceflow_inbox_v5 RENAME TO onceflow_inbox;
${RECORD_INDEXES}`;
