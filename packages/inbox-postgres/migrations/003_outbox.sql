-- onceflow PostgreSQL inbox, migration 003: the transactional outbox.
-- Placeholders as in 001. The outbox is a sibling of the inbox table: `<table>_outbox`.

-- One row per event the application added in its own transaction (outbox.add). A row is
--   unsent   sent_at NULL: due when available_at has passed; lease_token names the dispatcher
--            that holds it while available_at (the lease's end) is in the future
--   sent     sent_at set: the broker confirmed it; deleted by retention (purgeSent)
-- seq is the add order, and the order in which rows of one ordering_key are published.
CREATE TABLE IF NOT EXISTS {{table:outbox}} (
  seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source       text        NOT NULL,
  id           text        NOT NULL,
  ordering_key text,
  -- The envelope in wire format v1: the same id, bytes and hash on every re-send.
  envelope     text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  available_at timestamptz NOT NULL DEFAULT now(),
  lease_token  text,
  -- Leases taken so far.
  attempts     integer     NOT NULL DEFAULT 0,
  -- ErrorInfo of the last failed publish: { code, name, message }.
  last_error   jsonb,
  sent_at      timestamptz
-- Room on each page, so a lease (no indexed column changes) is a heap-only update.
) WITH (fillfactor = 70);

-- The dispatcher's scan: unsent rows in add order. Sent rows leave it.
CREATE INDEX IF NOT EXISTS {{name:outbox_unsent_idx}} ON {{table:outbox}} (seq)
  WHERE sent_at IS NULL;
-- Per-key order: is there an earlier unsent row of this key?
CREATE INDEX IF NOT EXISTS {{name:outbox_key_idx}} ON {{table:outbox}} (ordering_key, seq)
  WHERE sent_at IS NULL AND ordering_key IS NOT NULL;
-- Retention.
CREATE INDEX IF NOT EXISTS {{name:outbox_sent_idx}} ON {{table:outbox}} (sent_at)
  WHERE sent_at IS NOT NULL;
