import { createEmbedded, type Embedded } from '@onceflow/embedded';
import type { SimEvent } from '../src/index.js';

/** Three payments on one account, versions 1 to 3, 100 virtual ms apart. */
export const payments: readonly SimEvent[] = [1, 2, 3].map((v) => ({
  id: `evt_${v}`,
  type: 'payment',
  key: 'acct_1',
  payload: { account: 'acct_1', amount: v * 10, version: v, status: `status_${v}` },
}));

export interface Payment {
  readonly account: string;
  readonly amount: number;
  readonly version: number;
  readonly status: string;
}

/**
 * A downstream payments API that honours an idempotency key as Stripe does: the first request
 * with a key charges, a later one with the same key gets the same charge back. Without a key
 * every request charges.
 */
export class FakePaymentsApi {
  readonly charges: { eventId: string; amount: number }[] = [];
  readonly #byKey = new Map<string, number>();

  async charge(request: { eventId: string; amount: number }, idempotencyKey?: string) {
    if (idempotencyKey !== undefined) {
      const known = this.#byKey.get(idempotencyKey);
      if (known !== undefined) return { id: `ch_${known}` };
    }
    this.charges.push(request);
    if (idempotencyKey !== undefined) this.#byKey.set(idempotencyKey, this.charges.length);
    return { id: `ch_${this.charges.length}` };
  }

  chargesFor(eventId: string): number {
    return this.charges.filter((c) => c.eventId === eventId).length;
  }
}

/** A fresh embedded store in an in-memory SQLite file, with a ledger table beside onceflow's. */
export async function sqliteLedger(): Promise<Embedded> {
  const embedded = createEmbedded({ path: ':memory:' });
  await embedded.start();
  embedded.db.exec('CREATE TABLE ledger (event_id TEXT NOT NULL, amount INTEGER NOT NULL)');
  return embedded;
}

/** Ledger rows per event id. */
export function rowsPerEvent(embedded: Embedded): Map<string, number> {
  const rows = embedded.db
    .prepare('SELECT event_id, count(*) AS n FROM ledger GROUP BY event_id')
    .all() as { event_id: string; n: number }[];
  return new Map(rows.map((r) => [r.event_id, r.n]));
}

/** `undefined` when every event has exactly one row, else what is wrong. */
export function oneRowPerEvent(rows: ReadonlyMap<string, number>, events: readonly SimEvent[]) {
  for (const e of events) {
    const n = rows.get(e.id) ?? 0;
    if (n !== 1) return `ledger has ${n} rows for ${e.id}`;
  }
  return undefined;
}
