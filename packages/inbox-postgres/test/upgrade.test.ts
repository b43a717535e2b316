import type { Envelope } from '@onceflow/core';
import { encodeEnvelope } from '@onceflow/core/kit';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresInbox, migrate } from '../src/index.js';
import { applyMigrations } from '../src/migrate.js';
import { loadMigrations } from '../src/migrations.js';
import { createPool, dropSchema, envelope, randomSchema } from './helpers.js';

const pool = createPool(4);
const schemas: string[] = [];

afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

const OLD = new Date('2024-05-06T07:08:09.123456Z');

/** A schema as the release before the event record left it: migration 001 only. */
async function previousRelease(): Promise<string> {
  const schema = randomSchema();
  schemas.push(schema);
  const first = (await loadMigrations()).filter((m) => m.name === '001_inbox');
  expect(await applyMigrations(pool, { schema }, first)).toEqual({ applied: ['001_inbox'] });
  return schema;
}

describe('upgrading a table made by the previous migrations', () => {
  it('turns its rows into records: processed → completed, pending → received, a leased row → processing', async () => {
    const schema = await previousRelease();
    const t = `"${schema}".onceflow_inbox`;
    const old = () => envelope({ receivedAt: OLD });
    const [pending, enqueued, processed, leased, unclaimed] = [old(), old(), old(), old(), old()];
    const claimed = (e: Envelope, state: string) =>
      pool.query(
        `INSERT INTO ${t} (source, id, state, payload_hash, envelope, received_at, claimed_at,
           lease_token, lease_expires_at, enqueued_at, processed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10)`,
        [
          e.source,
          e.id,
          state,
          e.payloadHash,
          encodeEnvelope(e),
          OLD,
          state === 'pending' ? 'claim-token' : null,
          state === 'pending' ? new Date(Date.now() + 60_000) : null,
          state === 'pending' ? null : OLD,
          state === 'processed' ? OLD : null,
        ],
      );
    await claimed(pending, 'pending');
    await claimed(enqueued, 'enqueued');
    await claimed(processed, 'processed');
    await claimed(leased, 'enqueued');
    await pool.query(
      `UPDATE ${t} SET proc_token = 'worker-token', proc_expires_at = now() + interval '1 minute'
       WHERE id = $1`,
      [leased.id],
    );
    // A row the old processed-guard created for an event no receiver claimed.
    await pool.query(
      `INSERT INTO ${t} (source, id, state, received_at, processed_at)
       VALUES ($1, $2, 'processed', $3, $3)`,
      [unclaimed.source, unclaimed.id, OLD],
    );

    expect(await migrate(pool, { schema })).toEqual({
      applied: ['002_event_record', '003_outbox', '004_versions', '005_page_room'],
    });

    const store = createPostgresInbox({ pool, schema });
    const stateOf = async (e: Envelope) => (await store.get(e.source, e.id))?.state;
    expect(await stateOf(pending)).toBe('received');
    expect(await stateOf(enqueued)).toBe('enqueued');
    expect(await stateOf(processed)).toBe('completed');
    expect(await stateOf(leased)).toBe('processing');
    expect(await stateOf(unclaimed)).toBe('completed');
    const record = await store.get(processed.source, processed.id);
    expect(record).toMatchObject({ attempts: 0, history: [], receivedAt: OLD.toISOString() });
    expect(record?.updatedAt, 'whole milliseconds').toBe('2024-05-06T07:08:09.123Z');
    expect(await store.stats()).toMatchObject({ pending: 1, enqueued: 2, processed: 2 });

    // The store carries on from there.
    expect(await store.begin(processed, { leaseMs: 60_000, attempt: 2 })).toEqual({
      status: 'processed',
    });
    expect(await store.begin(unclaimed, { leaseMs: 60_000, attempt: 2 })).toEqual({
      status: 'processed',
    });
    expect((await store.begin(leased, { leaseMs: 60_000, attempt: 2 })).status).toBe('busy');
    await store.complete(leased.source, leased.id, 'worker-token'); // the old lease's token holds
    expect(await stateOf(leased)).toBe('completed');
    expect(await store.claim(pending, { leaseMs: 60_000 })).toEqual({ status: 'in-flight' });
    await store.markEnqueued(pending.source, pending.id, 'claim-token');
    expect(await stateOf(pending)).toBe('enqueued');
    expect((await store.begin(enqueued, { leaseMs: 60_000, attempt: 1 })).status).toBe('acquired');
    expect(await store.count({ state: 'dead-lettered' })).toBe(0);
  });

  it('refuses the old states, a dead letter without its envelope, and a dead letter out of its index', async () => {
    const schema = await previousRelease();
    await migrate(pool, { schema });
    const t = `"${schema}".onceflow_inbox`;
    const now = `date_trunc('milliseconds', statement_timestamp())`; // updated_at's default
    let n = 0;
    const insert = (state: string, envelopeText: string | null, deadAt: string) =>
      pool
        .query(
          `INSERT INTO ${t} (source, id, state, received_at, envelope, dead_lettered_at)
           VALUES ('s', $1, $2, now(), $3, ${deadAt})`,
          [`row-${++n}`, state, envelopeText],
        )
        .then(
          () => undefined,
          (err: { code?: string }) => err.code,
        );
    const kept = encodeEnvelope(envelope());
    expect(await insert('processed', null, 'NULL')).toBe('23514');
    expect(await insert('pending', null, 'NULL')).toBe('23514');
    expect(await insert('dead-lettered', null, now)).toBe('23514');
    expect(await insert('dead-lettered', kept, 'NULL')).toBe('23514');
    expect(await insert('dead-lettered', kept, `${now} - interval '1 second'`)).toBe('23514');
    expect(await insert('completed', kept, now)).toBe('23514');
    expect(await insert('dead-lettered', kept, now)).toBe(undefined);
    expect(await insert('completed', null, 'NULL')).toBe(undefined);
  });
});
