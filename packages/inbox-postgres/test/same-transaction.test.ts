import { AlreadyProcessedError } from '@onceflow/core';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { markProcessed } from '../src/index.js';
import { envelope, type Fixture, fixture, waitUntil } from './helpers.js';

type Outcome = 'committed' | 'already-processed' | 'rolled-back';

/**
 * Marking by (source, id): mark first, then the business write, in one transaction. The
 * ledger has no unique constraint, so only the mark can keep a second row out.
 */
async function attempt(
  fx: Fixture,
  client: pg.PoolClient,
  eventId: string,
  hooks: { beforeEnd?: () => Promise<'commit' | 'rollback'> } = {},
): Promise<Outcome> {
  try {
    await client.query('BEGIN');
    await markProcessed(client, { source: 'stripe', id: eventId }, { schema: fx.schema });
    await client.query(`INSERT INTO "${fx.schema}".ledger (event_id, amount) VALUES ($1, 42)`, [
      eventId,
    ]);
    const end = (await hooks.beforeEnd?.()) ?? 'commit';
    await client.query(end === 'commit' ? 'COMMIT' : 'ROLLBACK');
    return end === 'commit' ? 'committed' : 'rolled-back';
  } catch (err) {
    await client.query('ROLLBACK');
    if (err instanceof AlreadyProcessedError) return 'already-processed';
    throw err;
  }
}

async function withLedger(): Promise<Fixture> {
  const fx = await fixture({ max: 10 });
  await fx.pool.query(
    `CREATE TABLE "${fx.schema}".ledger (event_id text NOT NULL, amount int NOT NULL)`,
  );
  return fx;
}

async function ledgerRows(fx: Fixture, eventId: string): Promise<number> {
  const res = await fx.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${fx.schema}".ledger WHERE event_id = $1`,
    [eventId],
  );
  return res.rows[0]?.n ?? -1;
}

/** Runs a first attempt up to its commit, lets a second one block on the mark, then ends the first. */
async function interleave(fx: Fixture, firstEnds: 'commit' | 'rollback'): Promise<Outcome[]> {
  const [a, b] = [await fx.pool.connect(), await fx.pool.connect()];
  try {
    const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    let reached!: () => void;
    const atCommit = new Promise<void>((r) => {
      reached = r;
    });
    let endFirst!: () => void;
    const gate = new Promise<void>((r) => {
      endFirst = r;
    });
    const first = attempt(fx, a, 'evt_1', {
      beforeEnd: async () => {
        reached();
        await gate;
        return firstEnds;
      },
    });
    await atCommit;
    const second = attempt(fx, b, 'evt_1');
    await waitUntil(async () => {
      const res = await fx.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
        [bPid],
      );
      return res.rowCount === 1;
    });
    endFirst();
    return await Promise.all([first, second]);
  } finally {
    a.release();
    b.release();
  }
}

describe('markProcessed in the caller’s transaction', () => {
  it('a concurrent second attempt waits for the first, then finds it processed: one ledger row', async () => {
    await using fx = await withLedger();
    expect(await interleave(fx, 'commit')).toEqual(['committed', 'already-processed']);
    expect(await ledgerRows(fx, 'evt_1')).toBe(1);
  });

  it('when the first attempt rolls back, its mark goes with it and the second one commits', async () => {
    await using fx = await withLedger();
    expect(await interleave(fx, 'rollback')).toEqual(['rolled-back', 'committed']);
    expect(await ledgerRows(fx, 'evt_1')).toBe(1);
  });

  it('of many uncoordinated concurrent attempts exactly one commits', async () => {
    await using fx = await withLedger();
    const clients = await Promise.all(Array.from({ length: 8 }, () => fx.pool.connect()));
    try {
      const outcomes = await Promise.all(clients.map((c) => attempt(fx, c, 'evt_race')));
      expect(outcomes.filter((o) => o === 'committed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'already-processed')).toHaveLength(7);
    } finally {
      for (const c of clients) c.release();
    }
    expect(await ledgerRows(fx, 'evt_race')).toBe(1);
  });

  it('agrees with the event record in both directions', async () => {
    await using fx = await withLedger();
    const w = envelope({ id: 'evt_w' });
    const begun = await fx.store.begin(w, { leaseMs: 60_000, attempt: 1 });
    expect(begun.status).toBe('acquired');
    const client = await fx.pool.connect();
    try {
      expect(await attempt(fx, client, 'evt_w')).toBe('committed');
      expect(await fx.store.begin(w, { leaseMs: 60_000, attempt: 2 })).toEqual({
        status: 'processed',
      });
      const record = await fx.store.get('stripe', 'evt_w');
      expect(record?.state).toBe('completed');
      expect(record?.history.at(-1)).toMatchObject({
        state: 'completed',
        note: "marked in the handler's transaction",
      });

      const x = envelope({ id: 'evt_x' });
      const other = await fx.store.begin(x, { leaseMs: 60_000, attempt: 1 });
      if (other.status !== 'acquired') throw new Error('not acquired');
      await fx.store.complete('stripe', 'evt_x', other.token);
      expect(await attempt(fx, client, 'evt_x')).toBe('already-processed');
    } finally {
      client.release();
    }
    expect(await ledgerRows(fx, 'evt_x')).toBe(0);
  });
});
