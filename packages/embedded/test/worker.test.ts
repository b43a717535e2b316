import { createWorker, defineHandler, type HandlerContext } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded, markProcessedInTransaction } from '../src/index.js';
import { event, tempDbPath, waitFor } from './helpers.js';

describe('the worker over the embedded transport, event record and a ledger in the same file', () => {
  it('writes one ledger row per event despite a replay and a lease lost mid-handler', async () => {
    // The lock (and the processing lease) is the transport's, never renewed. A run is judged only
    // when evt_slow's attempt 1 began, and its attempt 2 committed, while their own leases were
    // surely held: a stall of the machine past either may rightly have let attempt 2 in before
    // attempt 1 began, or attempt 3 in before attempt 2 committed. Such a run is run again, on a
    // fresh file.
    const lockMs = 300;
    for (let run = 1; ; run++) {
      await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
      const db = embedded.db;
      // No unique constraint on purpose: a double effect would show as a second row.
      db.exec('CREATE TABLE ledger (event_id TEXT NOT NULL, attempt INTEGER NOT NULL)');
      const rows = (id: string) =>
        (db.prepare('SELECT count(*) AS n FROM ledger WHERE event_id = ?').get(id) as { n: number })
          .n;
      const record = db.transaction((ctx: HandlerContext) => {
        markProcessedInTransaction(db, ctx);
        db.prepare('INSERT INTO ledger (event_id, attempt) VALUES (?, ?)').run(
          ctx.envelope.id,
          ctx.attempt,
        );
      });

      /** True when `attempt` of evt_slow still holds its lease, with a quarter of it to spare. */
      const leaseHeld = (attempt: number, at: number) => {
        const row = db
          .prepare(
            `SELECT attempt, visible_at AS until FROM onceflow_messages WHERE dedupe_key = 'test:evt_slow'`,
          )
          .get() as { attempt: number; until: number };
        return row.attempt === attempt && at < row.until - lockMs / 4;
      };
      let firstInTime = false;
      let secondInTime = false;
      const transport = embedded.transport('work', { lockMs });
      const worker = createWorker({
        transport,
        records: embedded.records,
        heartbeatMs: false, // let the slow attempt's lock and lease run out
        retry: { baseDelayMs: 10, maxDelayMs: 50 },
        handlers: [
          defineHandler({
            type: 'test.event',
            async handle(_event, ctx) {
              const slow = ctx.envelope.id === 'evt_slow';
              if (slow && ctx.attempt === 1) {
                firstInTime = leaseHeld(1, Date.now()); // its record's `processing` is written
                // Outlives its lease; attempt 2 commits first, so this attempt's mark must lose.
                await waitFor(() => rows('evt_slow') === 1, 5000, 'attempt 2 of evt_slow');
              }
              record.immediate(ctx);
              if (slow && ctx.attempt === 2) secondInTime = leaseHeld(2, Date.now());
            },
          }),
        ],
      });
      await worker.start();

      const ids = Array.from({ length: 10 }, (_, i) => `evt_${i}`);
      await transport.publish([...ids, 'evt_slow'].map((id) => ({ envelope: event(id) })));
      await transport.publish([{ envelope: event('evt_3'), dedupeKey: 'evt_3:replay' }]);

      const pending = () =>
        (
          db
            .prepare(`SELECT count(*) AS n FROM onceflow_messages WHERE state = 'queued'`)
            .get() as {
            n: number;
          }
        ).n;
      await waitFor(() => pending() === 0, 10_000, 'every message settled');
      await worker.close();

      const inTime = firstInTime && secondInTime;
      if (!inTime && run < 5) continue;
      expect(inTime, 'a run whose attempts of evt_slow began and committed in time').toBe(true);
      for (const id of [...ids, 'evt_slow']) expect(rows(id), id).toBe(1);
      expect(db.prepare(`SELECT attempt FROM ledger WHERE event_id = 'evt_slow'`).get()).toEqual({
        attempt: 2,
      });
      expect(await embedded.records.count({ state: 'dead-lettered' })).toBe(0);
      const slow = await embedded.records.get('test', 'evt_slow');
      expect(slow).toMatchObject({ state: 'completed', attempts: 2 });
      expect(slow?.history.map((h) => [h.state, h.attempt])).toEqual([
        ['processing', 1],
        ['processing', 2],
        ['completed', 2],
      ]);
      return;
    }
  });

  it('dead-letters a misused mark on its first attempt, with what to do as the reason', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
    const transport = embedded.transport('work');
    const worker = createWorker({
      transport,
      records: embedded.records,
      handlers: [
        defineHandler({
          type: 'test.event',
          async handle(_event, ctx) {
            markProcessedInTransaction(embedded.db, ctx); // no transaction around it
          },
        }),
      ],
    });
    await worker.start();
    await transport.publish([{ envelope: event('evt_1') }]);
    const deadLetters = { state: 'dead-lettered', limit: 10 } as const;
    await waitFor(
      async () => (await embedded.records.count(deadLetters)) === 1,
      5000,
      'dead letter',
    );
    await worker.close();
    const [dead] = (await embedded.records.list(deadLetters)).records;
    expect(dead).toMatchObject({ attempts: 1, lastError: { code: 'USAGE' } });
    expect(dead?.reason).toMatch(/^markProcessedInTransaction must run inside a transaction/);
  });
});
