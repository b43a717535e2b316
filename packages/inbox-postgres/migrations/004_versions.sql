-- onceflow PostgreSQL inbox, migration 004: the stale-event guard (applyIfNewer).
-- Placeholders as in 001. The table is a sibling of the inbox table: `<table>_versions`.

-- One row per aggregate: the highest position applyIfNewer applied, compared as (version, tie)
-- in that order. version: the version, or occurredAt in ms since the epoch; tie: '' for plain
-- versions, the declared tie-break (an event id) for occurred-at positions, compared byte by
-- byte (COLLATE "C"), as SQLite does. Written only inside the handler's transaction.
CREATE TABLE IF NOT EXISTS {{table:versions}} (
  aggregate  text        PRIMARY KEY,
  version    bigint      NOT NULL,
  tie        text        COLLATE "C" NOT NULL DEFAULT '',
  updated_at timestamptz NOT NULL DEFAULT now()
);
