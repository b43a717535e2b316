import { join } from 'node:path';
import type { HandlerContext } from '@onceflow/core';
import { createEmbedded, markProcessedInTransaction } from '@onceflow/embedded';
import { DEMO_LOCK_MS } from '../lock.js';
import type { Ledger, Stack, StackOptions } from '../stack.js';

/**
 * The embedded default: inbox, queue and the demo's ledger in one SQLite file. The ledger row and
 * the processed mark are written in one SQLite transaction, with the outbound event in the
 * file's outbox.
 */
export async function embeddedStack(options: StackOptions): Promise<Stack> {
  const embedded = createEmbedded({ path: join(options.dir, 'onceflow.db') });
  await embedded.start();
  const db = embedded.db;
  // No unique constraint on event_id: a double would show as two rows.
  db.exec(`CREATE TABLE IF NOT EXISTS demo_ledger (
    row_id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL, source TEXT NOT NULL, type TEXT NOT NULL,
    amount INTEGER, charge_id TEXT NOT NULL, written_at INTEGER NOT NULL)`);
  const insert = db.prepare(
    'INSERT INTO demo_ledger (event_id, source, type, amount, charge_id, written_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const write = db.transaction((ctx: HandlerContext, entry: Parameters<Ledger['record']>[1]) => {
    const e = ctx.envelope;
    insert.run(e.id, e.source, e.type, entry.amount, entry.chargeId, Date.now());
    markProcessedInTransaction(db, ctx);
    if (entry.outbound) embedded.outbox.add(db, entry.outbound);
  });
  const ledger: Ledger = {
    record: async (ctx, entry) => {
      write.immediate(ctx, entry);
    },
    rowsByEvent: async () => {
      const rows = db
        .prepare('SELECT event_id AS id, COUNT(*) AS n FROM demo_ledger GROUP BY event_id')
        .all() as {
        id: string;
        n: number;
      }[];
      return new Map(rows.map((r) => [r.id, r.n]));
    },
  };
  return {
    broker: 'embedded',
    inbox: embedded.inbox,
    records: embedded.records,
    transport: embedded.transport(`demo-${options.runId}`, { lockMs: DEMO_LOCK_MS }),
    ledger,
    outbox: embedded.outbox,
    close: () => embedded.close(),
  };
}
