-- onceflow PostgreSQL inbox, migration 002: the row becomes the event record.
-- Placeholders as in 001. Runs in migrate()'s one transaction, so it applies whole or not at all;
-- it rewrites every row once (state and updated_at) under the table's lock.

-- The states of an event's life (EventState in @onceflow/core):
--   received         claimed by a receiver, not yet enqueued (was 'pending')
--   enqueued         on the broker; also after an operator's redrive, or a lease given up unused
--   processing       an attempt holds the processing lease (proc_token, proc_expires_at)
--   retry-scheduled  the last attempt failed: last_error, next_attempt_at
--   completed        handled, or marked in the handler's transaction (was 'processed')
--   dead-lettered    will not be tried again until an operator acts: reason, last_error, envelope
--   discarded        an operator purged the dead letter; kept for dedupe until retention
ALTER TABLE {{table}} DROP CONSTRAINT IF EXISTS {{name:state_check}};

ALTER TABLE {{table}}
  ADD COLUMN type            text,
  ADD COLUMN ordering_key    text,
  -- The highest delivery attempt started in the current run (a redrive starts again at 1).
  ADD COLUMN attempts        integer     NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz,
  -- ErrorInfo: { code, name, message }.
  ADD COLUMN last_error      jsonb,
  ADD COLUMN reason          text,
  ADD COLUMN consumer        text,
  ADD COLUMN trace_id        text,
  -- The last state change, whole milliseconds, so a list cursor (epoch ms) names it exactly.
  ADD COLUMN updated_at      timestamptz,
  -- HistoryEntry objects, oldest first, at most HISTORY_LIMIT (20): each write trims it.
  ADD COLUMN history         jsonb       NOT NULL DEFAULT '[]'::jsonb;

-- Existing rows: processed → completed, pending → received, a row under a worker's processing
-- lease → processing (the lease's token stays valid), the rest stay enqueued.
UPDATE {{table}} SET
  state = CASE
    WHEN state = 'processed' THEN 'completed'
    WHEN proc_token IS NOT NULL THEN 'processing'
    WHEN state = 'pending' THEN 'received'
    ELSE 'enqueued' END,
  updated_at = date_trunc('milliseconds', coalesce(processed_at, enqueued_at, claimed_at));

ALTER TABLE {{table}}
  ALTER COLUMN updated_at SET NOT NULL,
  ALTER COLUMN updated_at SET DEFAULT date_trunc('milliseconds', statement_timestamp()),
  ADD CONSTRAINT {{name:state_check}} CHECK (state IN ('received', 'enqueued', 'processing',
    'retry-scheduled', 'completed', 'dead-lettered', 'discarded')),
  -- A dead letter can always be redriven: its envelope is on the row.
  ADD CONSTRAINT {{name:dead_letter_check}} CHECK (state <> 'dead-lettered' OR envelope IS NOT NULL);

-- The relay's scan, under the new name of the state.
DROP INDEX IF EXISTS {{schema}}.{{name:pending_idx}};
CREATE INDEX IF NOT EXISTS {{name:claims_idx}} ON {{table}} (claimed_at) WHERE state = 'received';

-- Listing dead letters, in page order (keyset pagination on (updated_at, source, id), byte order).
-- Partial: only dead letters are in it, so the hot path never writes to it.
CREATE INDEX IF NOT EXISTS {{name:dead_letters_idx}} ON {{table}}
  (updated_at, source COLLATE "C", id COLLATE "C") WHERE state = 'dead-lettered';
