import { HISTORY_LIMIT } from '@onceflow/core';

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
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('received', 'enqueued', 'processing',
      'retry-scheduled', 'completed', 'dead-lettered', 'discarded')),
    processing_token TEXT,          -- the attempt holding the processing lease (state processing)
    processing_expires_at INTEGER,
    claim_token TEXT,               -- the receiver's claim, until markEnqueued or release
    claim_expires_at INTEGER,
    claimed_at INTEGER,
    payload_hash TEXT,              -- the receiver's claim; NULL for events that never passed one
    received_at INTEGER NOT NULL,   -- ms since epoch; retention is measured on it
    updated_at INTEGER NOT NULL,    -- ms since epoch of the last state change
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    type TEXT,
    ordering_key TEXT,
    consumer TEXT,
    trace_id TEXT,
    reason TEXT,
    last_error TEXT,                -- JSON ErrorInfo
    history TEXT NOT NULL DEFAULT '[]', -- JSON array of HistoryEntry, oldest first, at most ${HISTORY_LIMIT}
    envelope TEXT,                  -- wire format v1: the claimed event, or a dead letter's
    UNIQUE (source, id)
  );

  INSERT INTO onceflow_inbox_v5 (source, id, state, processing_token, processing_expires_at,
    claim_token, claim_expires_at, claimed_at, payload_hash, received_at, updated_at, attempts,
    next_attempt_at, type, ordering_key, consumer, trace_id, reason, last_error, history, envelope)
  SELECT source, id, state, processing_token, processing_expires_at,
    claim_token, claim_expires_at, claimed_at, payload_hash, received_at, updated_at, attempts,
    next_attempt_at, type, ordering_key, consumer, trace_id, reason, last_error, history, envelope
  FROM onceflow_inbox ORDER BY received_at;

  DROP TABLE onceflow_inbox;
  ALTER TABLE onceflow_inbox_v5 RENAME TO onceflow_inbox;
  CREATE INDEX onceflow_inbox_pending ON onceflow_inbox (claimed_at) WHERE state = 'received';
  CREATE INDEX onceflow_inbox_received ON onceflow_inbox (received_at);
  -- Dead letters are browsed oldest first, ties by (source, id): RecordPage order.
  CREATE INDEX onceflow_inbox_dead_letters ON onceflow_inbox (updated_at, source, id)
    WHERE state = 'dead-lettered';
`;
