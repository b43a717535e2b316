-- onceflow PostgreSQL inbox, migration 001.
-- Placeholders are filled in by migrate(): {{schema}}, {{table}} (schema-qualified inbox table),
-- {{table:<suffix>}} (a schema-qualified sibling table), {{name:<suffix>}} (an index name).

-- One row per (source, id): the receiver's claim and the worker's processed-guard share it.
--   state 'pending'   claimed by the receiver, not yet enqueued (lease_token/lease_expires_at hold the claim)
--   state 'enqueued'  on the broker, not yet processed (proc_token/proc_expires_at hold a processing lease)
--   state 'processed' a handler completed it (or marked it in its own transaction)
-- payload_hash and envelope are NULL on rows no receiver claimed: the worker's processed-guard
-- created them for events published by your own services (they count in stats once processed).
CREATE TABLE IF NOT EXISTS {{table}} (
  source           text        NOT NULL,
  id               text        NOT NULL,
  state            text        NOT NULL CHECK (state IN ('pending', 'enqueued', 'processed')),
  payload_hash     text,
  envelope         text,
  received_at      timestamptz NOT NULL,
  claimed_at       timestamptz NOT NULL DEFAULT now(),
  lease_token      text,
  lease_expires_at timestamptz,
  enqueued_at      timestamptz,
  proc_token       text,
  proc_expires_at  timestamptz,
  processed_at     timestamptz,
  PRIMARY KEY (source, id)
);

-- Few indexes on purpose: every claim inserts into each, and every state change rewrites them.
-- The relay's scan (takeStale): small, rows leave it when enqueued.
CREATE INDEX IF NOT EXISTS {{name:pending_idx}} ON {{table}} (claimed_at) WHERE state = 'pending';
-- Retention (purge).
CREATE INDEX IF NOT EXISTS {{name:received_idx}} ON {{table}} (received_at);

-- Every payload conflict (same id, other bytes) as evidence for the operator.
CREATE TABLE IF NOT EXISTS {{table:conflicts}} (
  seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source       text        NOT NULL,
  id           text        NOT NULL,
  payload_hash text        NOT NULL,
  envelope     text        NOT NULL,
  seen_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS {{name:conflicts_seen_idx}} ON {{table:conflicts}} (seen_at);
