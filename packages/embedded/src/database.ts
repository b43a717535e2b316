import { createDownState } from '@onceflow/core/kit';
import Database from 'better-sqlite3';
import type { EmbeddedConfig } from './config.js';
import { applyMigrations } from './migrations.js';

/** SQLite's answer when another connection holds the lock past busy_timeout. */
export const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown }).code;
  return (
    typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
  );
};

/** Thrown instead of waiting while another process is known to hold the write lock. */
class KnownLockedError extends Error {
  readonly code = 'SQLITE_BUSY';
  constructor(since: number | undefined) {
    super(
      `the database is locked by another process (since ${new Date(since ?? 0).toISOString()}); failing fast until a probe succeeds`,
    );
  }
}

type Db = Database.Database;
type Statement = Database.Statement;

/**
 * The one connection an embedded instance shares between its inbox, event record and
 * transports. Opening is lazy (first `get()` or `open()`) so factories do no I/O. Closed is final.
 *
 * Not for sharing across threads; other processes open their own instance on the same file.
 */
export interface DatabaseHandle {
  /** Opens the file, sets the pragmas and applies migrations on first call. Idempotent. */
  open(): Db;
  /** The open connection, opening it if needed. Throws once closed. */
  get(): Db;
  /** A prepared statement, cached per SQL text for the connection's lifetime. */
  stmt(sql: string): Statement;
  /**
   * Runs `fn` in a `BEGIN IMMEDIATE` transaction: takes the write lock up front, waiting for
   * another process's lock up to `waitMs` (default `busyTimeoutMs`). After a wait that ended in
   * `SQLITE_BUSY`, the file is known locked: further calls throw `SQLITE_BUSY` at once, without
   * waiting (the event loop is blocked while SQLite waits), except one probe after a backed-off
   * pause (250 ms doubling up to 5 s), which does not wait either; the first that takes the lock
   * ends it.
   */
  immediate<T>(fn: (db: Db) => T, waitMs?: number): T;
  /** How long the receive path's writes (the inbox claim, a publish) wait for the write lock. */
  readonly receiveWaitMs: number;
  close(): void;
}

function openFile(config: EmbeddedConfig): Db {
  const db = new Database(config.path);
  try {
    // busy_timeout first: switching to WAL waits on other connections like any lock.
    db.pragma(`busy_timeout = ${config.busyTimeoutMs}`);
    // Switching to WAL takes the write lock: only when the file is not in WAL mode yet.
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
      db.pragma('journal_mode = WAL');
    }
    // FULL fsyncs the WAL on every commit; NORMAL only at checkpoints (see config.ts).
    db.pragma(`synchronous = ${config.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    applyMigrations(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

export function createDatabaseHandle(config: EmbeddedConfig): DatabaseHandle {
  let db: Db | undefined;
  let closed = false;
  const statements = new Map<string, Statement>();
  const writeLock = createDownState();

  const handle: DatabaseHandle = {
    open() {
      if (closed) throw new Error('the embedded database is closed');
      db ??= openFile(config);
      return db;
    },
    get: () => handle.open(),
    stmt(sql) {
      let s = statements.get(sql);
      if (!s) {
        s = handle.get().prepare(sql);
        statements.set(sql, s);
      }
      return s;
    },
    receiveWaitMs: config.publishTimeoutMs,
    immediate(fn, waitMs = config.busyTimeoutMs) {
      const conn = handle.get();
      const run = () => conn.transaction(() => fn(conn)).immediate();
      if (conn.inTransaction) return run(); // nested: the outer call holds the lock
      const probe = writeLock.downSince !== undefined;
      if (!writeLock.admit()) throw new KnownLockedError(writeLock.downSince);
      // A probe only asks whether the lock is free now: waiting would block the process again.
      const wait = probe ? 0 : waitMs;
      const own = wait !== config.busyTimeoutMs;
      if (own) conn.pragma(`busy_timeout = ${wait}`);
      try {
        const result = run();
        writeLock.succeeded();
        return result;
      } catch (err) {
        if (isBusy(err)) writeLock.failed();
        else writeLock.succeeded();
        throw err;
      } finally {
        if (own) conn.pragma(`busy_timeout = ${config.busyTimeoutMs}`);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      statements.clear();
      db?.close();
      db = undefined;
    },
  };
  return handle;
}
