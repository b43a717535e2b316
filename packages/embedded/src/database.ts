import Database from 'better-sqlite3';
import type { EmbeddedConfig } from './config.js';
import { applyMigrations } from './migrations.js';

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
  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction (takes the write lock up front, waiting up to busy_timeout). */
  immediate<T>(fn: (db: Db) => T): T;
  close(): void;
}

function openFile(config: EmbeddedConfig): Db {
  const db = new Database(config.path);
  try {
    // busy_timeout first: switching to WAL waits on other connections like any lock.
    db.pragma(`busy_timeout = ${config.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
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
    immediate(fn) {
      const conn = handle.get();
      return conn.transaction(() => fn(conn)).immediate();
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
