-- onceflow PostgreSQL inbox, migration 002: the row becomes the event record.
-- Placeholders as in 001. Runs in migrate()'s one transaction, so it applies whole or not at all;
-- it rewrites every row once under the table's lock. Stop every process of the previous release
-- first: its statements write states this schema refuses.

-- The states of an event's life (EventState in @onceflow/core):
--   received         claimed by a receiver, not yet enqueued (was 'pending')
--   enqueued         on the broker; also after an operator's redrive, or a lease given up unused
--   processing       an attempt holds the processing lease (proc_token, proc_expires_at)
--   retry-scheduled  the last attempt failed: last_error, next_attempt_at
--   completed        handled, or marked in the handler's transaction (was 'processed')
--   dead-lettered    will not be tried again until an operator acts: reason, last_error, envelope
--   discarded        an operator purged the dead letter; kept for dedupe until retention
--
-- Why the columns sit where they do (each costs every delivery otherwise):
-- - No index covers a column the worker's writes change (state, updated_at, history, the lease),
--   so begin and complete are HOT updates (no index entries written): PostgreSQL makes an update
--   heap-only only when no indexed column, key or partial-index predicate, changed.
-- - The record's columns, state among them, come after the envelope: an update on the same page
--   logs only the bytes from the first changed column on, so begin and complete do not log the
--   envelope again. `state` moves to the end for that (its old column is dropped).
ALTER TABLE {{table}} RENAME COLUMN state TO state_v1;

ALTER TABLE {{table}}
  ADD COLUMN type             text,
  ADD COLUMN ordering_key     text,
  ADD COLUMN trace_id         text,
  ADD COLUMN reason           text,
  -- ErrorInfo: { code, name, message }.
  ADD COLUMN last_error       jsonb,
  ADD COLUMN next_attempt_at  timestamptz,
  -- updated_at while dead-lettered, NULL otherwise: what the dead-letter index orders by.
  ADD COLUMN dead_lettered_at timestamptz,
  -- The highest delivery attempt started in the current run (a redrive starts again at 1).
  ADD COLUMN attempts         integer     NOT NULL DEFAULT 0,
  ADD COLUMN consumer         text,
  -- The last state change, whole milliseconds, so a list cursor (epoch ms) names it exactly.
  ADD COLUMN updated_at       timestamptz,
  -- HistoryEntry objects, oldest first, at most HISTORY_LIMIT (20): each write trims it.
  ADD COLUMN history          jsonb       NOT NULL DEFAULT '[]'::jsonb,
  ADD COLUMN state            text;

-- Existing rows: processed → completed, pending → received, a row under a worker's processing
-- lease → processing (the lease's token stays valid), the rest stay enqueued.
UPDATE {{table}} SET
  state = CASE
    WHEN state_v1 = 'processed' THEN 'completed'
    WHEN proc_token IS NOT NULL THEN 'processing'
    WHEN state_v1 = 'pending' THEN 'received'
    ELSE 'enqueued' END,
  updated_at = date_trunc('milliseconds', coalesce(processed_at, enqueued_at, claimed_at));

-- The relay's index (its predicate names the old column) and the old check go with it.
DROP INDEX IF EXISTS {{schema}}.{{name:pending_idx}};
ALTER TABLE {{table}} DROP COLUMN state_v1;

ALTER TABLE {{table}}
  ALTER COLUMN state SET NOT NULL,
  ALTER COLUMN updated_at SET NOT NULL,
  ALTER COLUMN updated_at SET DEFAULT date_trunc('milliseconds', statement_timestamp()),
  ADD CONSTRAINT {{name:state_check}} CHECK (state IN ('received', 'enqueued', 'processing',
    'retry-scheduled', 'completed', 'dead-lettered', 'discarded')),
  -- A dead letter can always be redriven, and is always in the dead-letter index at its
  -- updated_at; no other record is.
  ADD CONSTRAINT {{name:dead_letter_check}} CHECK (CASE WHEN state = 'dead-lettered'
    THEN envelope IS NOT NULL AND dead_lettered_at IS NOT DISTINCT FROM updated_at
    ELSE dead_lettered_at IS NULL END);

-- The relay's scan: rows whose receiver's claim is still held (received ones; it skips others).
CREATE INDEX IF NOT EXISTS {{name:claims_idx}} ON {{table}} (claimed_at)
  WHERE lease_token IS NOT NULL;

-- Listing dead letters in page order: keyset pagination on (updated_at, source, id), byte order.
-- Partial, so the hot path never writes to it.
CREATE INDEX IF NOT EXISTS {{name:dead_letters_idx}} ON {{table}}
  (dead_lettered_at, source COLLATE "C", id COLLATE "C") WHERE dead_lettered_at IS NOT NULL;
