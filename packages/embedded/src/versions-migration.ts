/**
 * Schema version 4: the stale-event guard. One row per aggregate: the highest position
 * `applyIfNewer` applied, as `(version, tie)` compared in that order (`tie` is `''` for plain
 * versions, the declared tie-break for occurred-at positions). Written only in the handler's
 * transaction, so it moves with the business write it guards.
 */
export const VERSIONS_MIGRATION = `
  CREATE TABLE onceflow_versions (
    aggregate TEXT PRIMARY KEY,
    version INTEGER NOT NULL,       -- the version, or occurredAt in ms since epoch
    tie TEXT NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL     -- ms since epoch
  ) WITHOUT ROWID;
`;
