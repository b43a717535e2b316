/**
 * Schema version 3: the transactional outbox. One row per event the application added in its
 * own transaction (`outbox.add`). A row is unsent (`sent_at` NULL; due once `available_at` has
 * passed; `lease_token` names the dispatcher holding it while `available_at`, the lease's end, is
 * in the future) or sent (`sent_at` set: the broker confirmed it; deleted by retention). `seq` is
 * the add order, and the order in which the rows of one ordering key are published.
 */
export const OUTBOX_MIGRATION = `
  CREATE TABLE onceflow_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    ordering_key TEXT,
    envelope TEXT NOT NULL,         -- wire format v1: the same id, bytes and hash on every re-send
    created_at INTEGER NOT NULL,    -- ms since epoch
    available_at INTEGER NOT NULL,
    lease_token TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,                -- JSON ErrorInfo of the last failed publish
    sent_at INTEGER
  );
  CREATE INDEX onceflow_outbox_unsent ON onceflow_outbox (seq) WHERE sent_at IS NULL;
  CREATE INDEX onceflow_outbox_key ON onceflow_outbox (ordering_key, seq)
    WHERE sent_at IS NULL AND ordering_key IS NOT NULL;
  CREATE INDEX onceflow_outbox_sent ON onceflow_outbox (sent_at) WHERE sent_at IS NOT NULL;
`;
