import {
  AlreadyProcessedError,
  type HandlerContext,
  LockLostError,
  UsageError,
} from '@onceflow/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createEmbedded, type Embedded, markProcessedInTransaction } from '../src/index.js';
import { event, tempDbPath } from './helpers.js';

type LeaseHolder = Pick<HandlerContext, 'envelope' | 'processingToken'>;

const LEDGER = 'CREATE TABLE ledger (event_id TEXT NOT NULL, amount INTEGER NOT NULL)';

/** The worker's `begin` of attempt 1 of test/`id`. */
const begin = (embedded: Embedded, id: string, leaseMs = 60_000) =>
  embedded.records.begin(event(id), { leaseMs, attempt: 1, consumer: 'worker-a' });

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
    expect(await begin(embedded, 'evt_1', 1000)).toEqual({
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
    expect((await begin(embedded, 'evt_1', 1000)).status).toBe('acquired');
  });

  it('decides between a worker attempt and a late attempt holding an expired lease', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    db.exec(LEDGER);
    const write = db.transaction((id: string) => {
      db.prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)').run(id, 1);
      markProcessedInTransaction(db, 'test', id);
    });
    const late = await begin(embedded, 'evt_1', 1);
    await new Promise((r) => setTimeout(r, 5));
    const current = await begin(embedded, 'evt_1', 60_000);
    if (late.status !== 'acquired' || current.status !== 'acquired') throw new Error('acquire');

    write.immediate('evt_1');
    await embedded.records.complete('test', 'evt_1', current.token);
    expect(() => write.immediate('evt_1')).toThrow(AlreadyProcessedError);
    await embedded.records.complete('test', 'evt_1', late.token);
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
    expect((await begin(embedded, 'evt_9', 1)).status).toBe('processed');
  });

  it('refuses to run outside a transaction or on a file without the onceflow tables', () => {
    const db = new Database(':memory:');
    try {
      expect(() => markProcessedInTransaction(db, 'test', 'x')).toThrow(UsageError);
      expect(() => db.transaction(() => markProcessedInTransaction(db, 'test', 'x'))()).toThrow(
        /no onceflow tables .*: pass the embedded store's db/,
      );
    } finally {
      db.close();
    }
  });

  it('refuses a source or id taken from the payload (undefined, empty)', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    const payload = { id: 'evt_1' } as { id: string; source?: string };
    const mark = db.transaction((source: unknown, id: unknown) =>
      markProcessedInTransaction(db, source as string, id as string),
    );
    expect(() => mark.immediate(payload.source, payload.id)).toThrow(
      /^markProcessedInTransaction: source must be a non-empty string, got undefined: pass the handler's ctx/,
    );
    expect(() => mark.immediate('test', '')).toThrow(UsageError);
    expect((await begin(embedded, 'evt_1', 1)).status).toBe('acquired');
  });

  it('by (source, id) it completes a record in any state but completed or discarded', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const db = embedded.db;
    const mark = db.transaction((id: string) => markProcessedInTransaction(db, 'test', id));
    await embedded.records.deadLetter(event('evt_dead'), undefined, { reason: 'x', attempts: 1 });
    mark.immediate('evt_dead');
    mark.immediate('evt_new');
    for (const id of ['evt_dead', 'evt_new']) {
      const record = await embedded.records.get('test', id);
      expect(record?.state, id).toBe('completed');
      expect(record?.history.at(-1), id).toMatchObject({
        at: record?.updatedAt,
        state: 'completed',
      });
    }
    await embedded.records.act('test', 'evt_dead', { kind: 'discarded', actor: 'cli:a' });
    expect(() => mark.immediate('evt_dead')).toThrow(AlreadyProcessedError);
  });
});

describe('markProcessedInTransaction(db, ctx): the mark holds while this attempt owns the lease', () => {
  const withLedger = () => {
    const embedded = createEmbedded({ path: tempDbPath() });
    embedded.db.exec(LEDGER);
    const record = embedded.db.transaction((ctx: LeaseHolder) => {
      markProcessedInTransaction(embedded.db, ctx);
      embedded.db
        .prepare('INSERT INTO ledger (event_id, amount) VALUES (?, ?)')
        .run(ctx.envelope.id, 42);
    });
    const attempt = (ctx: LeaseHolder): unknown => {
      try {
        record.immediate(ctx);
        return undefined;
      } catch (err) {
        return err;
      }
    };
    const rows = () =>
      (embedded.db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number }).n;
    /** A context holding a real processing lease, as the worker builds it. */
    const leased = async (id: string, leaseMs = 60_000): Promise<LeaseHolder> => {
      const begun = await begin(embedded, id, leaseMs);
      if (begun.status !== 'acquired') throw new Error(`${id}: ${begun.status}`);
      return { envelope: event(id), processingToken: begun.token };
    };
    return { embedded, attempt, rows, leased };
  };

  it('marks under the lease; a second attempt after completion is AlreadyProcessedError', async () => {
    const { embedded, attempt, rows, leased } = withLedger();
    await using _ = embedded;
    const ctx = await leased('evt_1');
    expect(attempt(ctx)).toBeUndefined();
    expect(attempt(ctx)).toBeInstanceOf(AlreadyProcessedError);
    expect(rows()).toBe(1);
    expect((await begin(embedded, 'evt_1', 1)).status).toBe('processed');
  });

  it('the mark is the record completing: state, lease given up, one history entry', async () => {
    const { embedded, attempt, leased } = withLedger();
    await using _ = embedded;
    const ctx = await leased('evt_1');
    expect(attempt(ctx)).toBeUndefined();
    const record = await embedded.records.get('test', 'evt_1');
    expect(record).toMatchObject({ state: 'completed', attempts: 1, consumer: 'worker-a' });
    expect(record?.history).toMatchObject([
      { state: 'processing', attempt: 1, actor: 'worker-a' },
      { state: 'completed', attempt: 1, actor: 'worker-a' },
    ]);
    expect(record?.updatedAt).toBe(record?.history.at(-1)?.at);
    // The worker's complete after the handler changes nothing.
    await embedded.records.complete('test', 'evt_1', ctx.processingToken);
    expect(await embedded.records.get('test', 'evt_1')).toEqual(record);
  });

  it('another attempt took the expired lease: LockLostError for the late one, the holder marks', async () => {
    const { embedded, attempt, rows, leased } = withLedger();
    await using _ = embedded;
    const late = await leased('evt_1', 1);
    await new Promise((r) => setTimeout(r, 5));
    const holder = await leased('evt_1');
    const err = attempt(late);
    expect(err).toBeInstanceOf(LockLostError);
    expect((err as Error).message).toMatch(/lost to another attempt/);
    expect(attempt(holder)).toBeUndefined();
    expect(attempt(late)).toBeInstanceOf(AlreadyProcessedError);
    expect(rows()).toBe(1);
  });

  it('misuse is a UsageError: another file, or a ctx without a lease', async () => {
    const { embedded, attempt, rows, leased } = withLedger();
    await using _ = embedded;
    await using other = createEmbedded({ path: tempDbPath() });
    await other.start();
    const ctx = await leased('evt_1');
    const elsewhere = other.db.transaction(() => markProcessedInTransaction(other.db, ctx));
    expect(() => elsewhere.immediate()).toThrow(
      'markProcessedInTransaction: no processing lease for test/evt_1 in this database: pass the db of the embedded store the worker uses as its records',
    );
    const noLease = attempt({ envelope: event('evt_2'), processingToken: '' });
    expect(noLease).toBeInstanceOf(UsageError);
    expect((noLease as Error).message).toMatch(/ctx holds no processing lease/);
    expect(rows()).toBe(0);
  });
});
