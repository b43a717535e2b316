import type { RecordQuery } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { listQuery } from '../src/record-query.js';
import { envelope, type Fixture, fixture } from './helpers.js';

const LETTERS = 10_000;

/** `LETTERS` dead letters through the store, half of them sharing one `updated_at`. */
async function seed(fx: Fixture): Promise<void> {
  const fields = { reason: 'attempts exhausted', attempts: 5 };
  for (let done = 0; done < LETTERS; done += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        fx.store.deadLetter(envelope({ id: `dl-${done + i}` }), undefined, fields),
      ),
    );
  }
  const t = `"${fx.schema}".onceflow_inbox`;
  await fx.pool.query(
    `UPDATE ${t} SET updated_at = date_trunc('milliseconds', now()), dead_lettered_at = date_trunc('milliseconds', now())
     WHERE id LIKE 'dl-%5' OR id LIKE 'dl-%0'`,
  );
  // Completed records beside them, as a live table has: the listing must not scan them.
  await fx.pool.query(
    `INSERT INTO ${t} (source, id, state, received_at)
     SELECT 'stripe', 'done-' || n, 'completed', now() FROM generate_series(1, 20000) AS n`,
  );
  await fx.pool.query(`VACUUM ANALYZE ${t}`); // as autovacuum would: planner statistics, visibility map
}

async function plan(fx: Fixture, built: { text: string; values: unknown[] }): Promise<string> {
  const res = await fx.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${built.text}`, built.values);
  return res.rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('listing dead letters', () => {
  it('pages 10k dead letters 1000 at a time through the dead-letter index, each once', async () => {
    await using fx = await fixture({ max: 10 });
    await seed(fx);
    const t = `"${fx.schema}".onceflow_inbox`;
    const query: RecordQuery = { state: 'dead-lettered', limit: 1000 };

    const seen = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    let last = -Infinity;
    do {
      const page = await fx.store.list({ ...query, cursor });
      pages++;
      for (const r of page.records) {
        expect(seen.has(r.id), `${r.id} listed once`).toBe(false);
        seen.add(r.id);
        const at = Date.parse(r.updatedAt);
        expect(at).toBeGreaterThanOrEqual(last);
        last = at;
      }
      if (page.next !== undefined) {
        const next = await plan(fx, listQuery(t, { ...query, cursor: page.next }));
        expect(next).toMatch(
          /Index Scan on "?onceflow_inbox_dead_letters_idx"?|Index Scan using "?onceflow_inbox_dead_letters_idx"?/,
        );
        expect(next).not.toMatch(/Seq Scan/);
      }
      cursor = page.next;
    } while (cursor !== undefined && pages < 20);
    expect(pages).toBe(10);
    expect(seen.size).toBe(LETTERS);
    expect(await fx.store.count({ state: 'dead-lettered' })).toBe(LETTERS);
    const bySource = await plan(fx, listQuery(t, { ...query, source: 'stripe' }));
    expect(bySource).toMatch(/dead_letters_idx/);
    expect(bySource).not.toMatch(/Seq Scan/);
  }, 120_000);
});
