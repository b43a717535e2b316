import { AlreadyProcessedError, ConfigError } from '@onceflow/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createEmbedded, markProcessedInTransaction } from '../src/index.js';
import { tempDbPath } from './helpers.js';

const LEDGER = 'CREATE TABLE ledger (event_id TEXT NOT NULL, amount INTEGER NOT NULL)';

describe('embedded processed-guard', () => {
  it('leases one attempt at a time, then answers processed', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const { processed } = embedded;
    const first = await processed.begin('test', 'evt_1', { leaseMs: 60_000 });
    expect(first.status).toBe('acquired');
    const second = await processed.begin('test', 'evt_1', { leaseMs: 60_000 });
    expect(second.status).toBe('busy');
    if (second.status === 'busy') expect(second.retryAfterMs).toBeGreaterThan(59_000);
    if (first.status !== 'acquired') return;
    await processed.complete('test', 'evt_1', first.token);
    await processed.complete('test', 'evt_1', first.token);
    expect(await processed.begin('test', 'evt_1', { leaseMs: 1000 })).toEqual({
      status: 'processed',
    });
  });

  it('lets the next attempt in after release or lease expiry, and stops extend for the loser', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const { processed } = embedded;
    const a = await processed.begin('test', 'evt_1', { leaseMs: 1 });
    if (a.status !== 'acquired') throw new Error('expected acquired');
    await new Promise((r) => setTimeout(r, 5));
    const b = await processed.begin('test', 'evt_1', { leaseMs: 60_000 });
    if (b.status !== 'acquired') throw new Error('expected acquired after expiry');
    expect(await processed.extend('test', 'evt_1', a.token, 60_000)).toBe(false);
    expect(await processed.extend('test', 'evt_1', b.token, 60_000)).toBe(true);
    await processed.release('test', 'evt_1', a.token); // not the holder: no effect
    expect((await processed.begin('test', 'evt_1', { leaseMs: 1 })).status).toBe('busy');
    await processed.release('test', 'evt_1', b.token);
    expect((await processed.begin('test', 'evt_1', { leaseMs: 1 })).status).toBe('acquired');
  });
});

describe('markProcessedInTransaction', () => {
  it('commits the ledger write and the processed mark together, once', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    db.exec(LEDGER);
    const record = db.transaction((id: string, amount: number) => {
      db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run(id, amount);
      markProcessedInTransaction(db, 'test', id);
    });

    record.immediate('evt_1', 42);
    expect(() => record.immediate('evt_1', 42)).toThrow(AlreadyProcessedError);
    expect(db.prepare('SELECT count(*) AS n FROM ledger').get()).toEqual({ n: 1 });
    expect(await embedded.processed.begin('test', 'evt_1', { leaseMs: 1000 })).toEqual({
      status: 'processed',
    });
  });

  it('rolls the mark back with the ledger write when the transaction fails', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    db.exec(LEDGER);
    const failing = db.transaction((id: string) => {
      markProcessedInTransaction(db, 'test', id);
      db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run(id, 1);
      throw new Error('business rule failed after the write');
    });
    expect(() => failing('evt_1')).toThrow('business rule failed');
    expect(db.prepare('SELECT count(*) AS n FROM ledger').get()).toEqual({ n: 0 });
    expect((await embedded.processed.begin('test', 'evt_1', { leaseMs: 1000 })).status).toBe(
      'acquired',
    );
  });

  it('decides between a worker attempt and a late attempt holding an expired lease', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    db.exec(LEDGER);
    const write = db.transaction((id: string) => {
      db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run(id, 1);
      markProcessedInTransaction(db, 'test', id);
    });
    const late = await embedded.processed.begin('test', 'evt_1', { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    const current = await embedded.processed.begin('test', 'evt_1', { leaseMs: 60_000 });
    if (late.status !== 'acquired' || current.status !== 'acquired') throw new Error('acquire');

    write.immediate('evt_1');
    await embedded.processed.complete('test', 'evt_1', current.token);
    expect(() => write.immediate('evt_1')).toThrow(AlreadyProcessedError);
    await embedded.processed.complete('test', 'evt_1', late.token);
    expect(db.prepare('SELECT count(*) AS n FROM ledger').get()).toEqual({ n: 1 });
  });

  it('works on a connection the application opened itself on the same file', async () => {
    const path = tempDbPath();
    await using embedded = createEmbedded({ path });
    await embedded.start();
    const own = new Database(path);
    try {
      own.pragma('busy_timeout = 5000');
      own.exec(LEDGER);
      own.transaction(() => {
        own.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run('evt_9', 9);
        markProcessedInTransaction(own, 'test', 'evt_9');
      })();
    } finally {
      own.close();
    }
    expect((await embedded.processed.begin('test', 'evt_9', { leaseMs: 1 })).status).toBe(
      'processed',
    );
  });

  it('refuses to run outside a transaction or on a file without the onceflow tables', () => {
    const db = new Database(':memory:');
    try {
      expect(() => markProcessedInTransaction(db, 'test', 'x')).toThrow(ConfigError);
      expect(() => db.transaction(() => markProcessedInTransaction(db, 'test', 'x'))()).toThrow(
        /no onceflow tables/,
      );
    } finally {
      db.close();
    }
  });
});
