import type { Database } from 'better-sqlite3';
import { OUTBOX_MIGRATION } from './outbox-migration.js';
import { RECORD_MIGRATION } from './record-migration.js';
import { ROWID_MIGRATION } from './rowid-migration.js';
import { VERSIONS_MIGRATION } from './versions-migration.js';

/**
 * The schema, one SQL script per version. Applied in order, each once, recorded in
 * `onceflow_migrations` (not `PRAGMA user_version`, which belongs to the application sharing the
 * file). Never edit a shipped script: add the next one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  -- One row per event seen by the receiver (state pending/enqueued) or by the processed-guard
  -- only (state NULL: an event your own services published without an inbox).
  CREATE TABLE onceflow_inbox (
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    payload_hash TEXT,
    envelope TEXT,                  -- wire format v1
    state TEXT CHECK (state IN ('pending', 'enqueued')),
    received_at INTEGER NOT NULL,   -- ms since epoch; retention is measured on it
    claimed_at INTEGER,
    claim_token TEXT,
    claim_expires_at INTEGER,
    enqueued_at INTEGER,
    processing_token TEXT,
    processing_expires_at INTEGER,
    processed_at INTEGER,
    PRIMARY KEY (source, id)
  ) WITHOUT ROWID;
  CREATE INDEX onceflow_inbox_pending ON onceflow_inbox (claimed_at) WHERE state = 'pending';
  CREATE INDEX onceflow_inbox_received ON onceflow_inbox (received_at);

  CREATE TABLE onceflow_inbox_conflicts (
    seq INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    seen_at INTEGER NOT NULL
  );

  -- Every queue's messages. state 'queued': waiting or leased (lease_token set and
  -- visible_at in the future); 'done': acked or dead-lettered, kept without its envelope as a
  -- dedupe tombstone for the queue's dedupe window.
  CREATE TABLE onceflow_messages (
    seq INTEGER PRIMARY KEY,        -- publish order
    queue TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    ordering_key TEXT,
    envelope TEXT,
    state TEXT NOT NULL CHECK (state IN ('queued', 'done')),
    attempt INTEGER NOT NULL DEFAULT 0,
    visible_at INTEGER NOT NULL,    -- next time it may be handed out; the lease expiry while leased
    lease_token TEXT,
    last_error TEXT,                -- JSON ErrorInfo of the last retry
    published_at INTEGER NOT NULL,
    done_at INTEGER,
    UNIQUE (queue, dedupe_key)
  );
  CREATE INDEX onceflow_messages_ready ON onceflow_messages (queue, visible_at, seq)
    WHERE state = 'queued';
  CREATE INDEX onceflow_messages_key ON onceflow_messages (queue, ordering_key, seq)
    WHERE state = 'queued' AND ordering_key IS NOT NULL;
  CREATE INDEX onceflow_messages_done ON onceflow_messages (queue, done_at) WHERE state = 'done';

  CREATE TABLE onceflow_dead_letters (
    id INTEGER PRIMARY KEY,
    queue TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    envelope TEXT NOT NULL,
    reason TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    last_error TEXT,                -- JSON ErrorInfo
    dead_lettered_at INTEGER NOT NULL
  );
  CREATE INDEX onceflow_dead_letters_queue ON onceflow_dead_letters (queue, id);
  `,
  RECORD_MIGRATION,
  OUTBOX_MIGRATION,
  VERSIONS_MIGRATION,
  ROWID_MIGRATION,
];

/**
 * Creates or upgrades the onceflow tables in `db`; returns how many versions it applied.
 * Idempotent and safe to run from several processes at once: it reads the applied version first
 * (without the write lock, so a file that is up to date opens while another process writes), and
 * only when a version is due takes the write lock (an IMMEDIATE transaction) and applies what is
 * still missing. Refuses a file whose schema is newer than this
 * package. `createEmbedded().start()` calls it; call it yourself only for a connection you opened.
 *
 * Upgrading: stop the processes of the previous version before the first new one opens the file;
 * the old ones' statements fail against the new schema (`StoreUnavailableError`).
 *
 * @example
 * const db = new Database('onceflow.db');
 * applyMigrations(db);
 */
export function applyMigrations(db: Database): number {
  // A read first, which a writer in another process does not block (WAL): when nothing is due,
  // start-up never waits for the write lock.
  if (appliedVersion(db) === MIGRATIONS.length) return 0;
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS onceflow_migrations (
      version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
    const row = db.prepare('SELECT max(version) AS v FROM onceflow_migrations').get() as {
      v: number | null;
    };
    const current = row.v ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `the file's onceflow schema is version ${current}, newer than this @onceflow/embedded (${MIGRATIONS.length}): upgrade every process that opens it`,
      );
    }
    const record = db.prepare(
      'INSERT INTO onceflow_migrations (version, applied_at) VALUES (?, ?)',
    );
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      db.exec(MIGRATIONS[version - 1]!);
      record.run(version, Date.now());
    }
    return MIGRATIONS.length - current;
  });
  return run.immediate();
}

/** The highest version recorded in the file, 0 when none is (or there is no migrations table). */
function appliedVersion(db: Database): number {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'onceflow_migrations'")
    .get();
  if (!table) return 0;
  const row = db.prepare('SELECT max(version) AS v FROM onceflow_migrations').get() as {
    v: number | null;
  };
  return row.v ?? 0;
}
