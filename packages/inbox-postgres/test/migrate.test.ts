import { ConfigError } from '@onceflow/core';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/index.js';
import { createPool, dropSchema, randomSchema } from './helpers.js';

/** Every shipped migration, in order. */
const ALL = ['001_inbox', '002_event_record', '003_outbox', '004_versions', '005_page_room'];

const pool = createPool(2);
const schemas: string[] = [];
const fresh = (): string => {
  const schema = randomSchema();
  schemas.push(schema);
  return schema;
};

afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

async function tablesIn(schema: string): Promise<string[]> {
  const res = await pool.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
    [schema],
  );
  return res.rows.map((r) => r.table_name);
}

describe('migrate', () => {
  it('creates the schema and tables, and records each migration once', async () => {
    const schema = fresh();
    expect(await migrate(pool, { schema })).toEqual({ applied: ALL });
    expect(await tablesIn(schema)).toEqual([
      'onceflow_inbox',
      'onceflow_inbox_conflicts',
      'onceflow_inbox_outbox',
      'onceflow_inbox_versions',
      'onceflow_migrations',
    ]);
    const log = await pool.query(
      `SELECT target, name FROM "${schema}".onceflow_migrations ORDER BY name`,
    );
    expect(log.rows).toEqual(ALL.map((name) => ({ target: 'onceflow_inbox', name })));
  });

  it("keeps a fifth of each inbox page free for the record's next versions", async () => {
    const schema = fresh();
    await migrate(pool, { schema });
    const res = await pool.query<{ reloptions: string[] | null }>(
      'SELECT reloptions FROM pg_class WHERE oid = $1::regclass',
      [`"${schema}".onceflow_inbox`],
    );
    expect(res.rows[0]?.reloptions).toEqual(['fillfactor=80']);
  });

  it('is idempotent: a second run applies nothing', async () => {
    const schema = fresh();
    await migrate(pool, { schema });
    expect(await migrate(pool, { schema })).toEqual({ applied: [] });
    const log = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".onceflow_migrations`);
    expect(log.rows[0]).toEqual({ n: ALL.length });
  });

  it('is safe when several processes start at once', async () => {
    const schema = fresh();
    // One pool per "process", so each migrate runs on its own connection at the same time.
    const pools = Array.from({ length: 4 }, () => createPool(1));
    try {
      const results = await Promise.all(pools.map((p) => migrate(p, { schema })));
      const applied = results.map((r) => r.applied.length).sort();
      expect(applied).toEqual([0, 0, 0, ALL.length]);
      expect(await tablesIn(schema)).toContain('onceflow_inbox');
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('keeps several inbox tables in one schema apart', async () => {
    const schema = fresh();
    const [a, b] = await Promise.all([
      migrate(pool, { schema, table: 'inbox_a' }),
      migrate(pool, { schema, table: 'inbox_b' }),
    ]);
    expect([a.applied, b.applied]).toEqual([ALL, ALL]);
    expect(await tablesIn(schema)).toEqual([
      'inbox_a',
      'inbox_a_conflicts',
      'inbox_a_outbox',
      'inbox_a_versions',
      'inbox_b',
      'inbox_b_conflicts',
      'inbox_b_outbox',
      'inbox_b_versions',
      'onceflow_migrations',
    ]);
  });

  it('refuses unsafe names before touching the database', async () => {
    await expect(migrate(pool, { schema: 'x"; DROP SCHEMA public; --' })).rejects.toBeInstanceOf(
      ConfigError,
    );
    await expect(migrate(pool, { table: '1inbox' })).rejects.toBeInstanceOf(ConfigError);
  });
});
