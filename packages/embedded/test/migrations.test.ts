import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createEnvelope, type Envelope } from '@onceflow/core';
import { encodeEnvelope } from '@onceflow/core/kit';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { applyMigrations, createEmbedded } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { event, tempDbPath } from './helpers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const RECEIVED = Date.parse('2024-05-06T07:08:09.123Z');
const T = (s: number) => RECEIVED + s * 1000 + 7; // ms that do not round to whole seconds

/** A file at schema version 1, as the previous release left it. */
function fileAtVersion1(): { path: string; db: Database.Database } {
  const path = tempDbPath();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE onceflow_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
    ${MIGRATIONS[0]}
    INSERT INTO onceflow_migrations VALUES (1, 0);`);
  return { path, db };
}

type V1Row = Partial<Record<string, string | number | null>> & { id: string };

/** A row as the version 1 inbox and processed-guard wrote it. */
function insertV1(db: Database.Database, row: V1Row) {
  const full = { source: 'test', received_at: RECEIVED, ...row };
  const columns = Object.keys(full);
  db.prepare(
    `INSERT INTO onceflow_inbox (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  ).run(...Object.values(full));
}

/** A dead letter as the version 1 transport kept it, in its own table. */
function insertV1DeadLetter(db: Database.Database, env: Envelope, at: number) {
  db.prepare(
    `INSERT INTO onceflow_dead_letters (queue, dedupe_key, envelope, reason, attempts, last_error,
       dead_lettered_at) VALUES ('webhooks', ?, ?, 'attempts exhausted', 5, ?, ?)`,
  ).run(env.id, encodeEnvelope(env), JSON.stringify(FAILURE), at);
}

const FAILURE = { code: 'RETRY_LATER', name: 'RetryLaterError', message: 'still 503' };

const claimed = (env: Envelope) => ({
  id: env.id,
  payload_hash: env.payloadHash,
  envelope: encodeEnvelope(env),
  claimed_at: T(1),
});

describe('migration to the event record (schema version 2)', () => {
  it('maps the previous rows onto record states, keeping claims, leases and envelopes', async () => {
    const { path, db } = fileAtVersion1();
    const traced = createEnvelope({
      id: 'pending',
      source: 'test',
      type: 'order.paid',
      key: 'cus_1',
      payload: { amount: 1 },
      headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    });
    const live = Date.now() + 60_000;
    insertV1(db, {
      ...claimed(traced),
      state: 'pending',
      claim_token: 'claim-1',
      claim_expires_at: 1,
    });
    insertV1(db, { ...claimed(event('enqueued')), state: 'enqueued', enqueued_at: T(2) });
    insertV1(db, {
      ...claimed(event('processed')),
      state: 'enqueued',
      enqueued_at: T(2),
      processed_at: T(3),
    });
    insertV1(db, { id: 'guard-processed', processed_at: T(3) });
    insertV1(db, { id: 'guard-running', processing_token: 'lease-1', processing_expires_at: live });
    insertV1(db, {
      ...claimed(event('expired')),
      state: 'enqueued',
      enqueued_at: T(2),
      processing_token: 'lease-2',
      processing_expires_at: 1,
    });
    insertV1(db, { ...claimed(event('dead-claimed')), state: 'enqueued', enqueued_at: T(2) });
    insertV1DeadLetter(db, event('dead-claimed'), T(4));
    insertV1DeadLetter(db, event('dead-unclaimed', { payload: { bytes: 'x' } }), T(5));
    insertV1DeadLetter(db, event('processed'), T(6)); // handled since: the record stays completed
    db.close();

    await using embedded = createEmbedded({ path });
    await embedded.start();
    const { records, inbox } = embedded;
    const get = async (id: string) => {
      const r = await records.get('test', id);
      if (!r) throw new Error(`no record of ${id}`);
      return r;
    };

    const pending = await get('pending');
    expect(pending).toMatchObject({
      state: 'received',
      type: 'order.paid',
      key: 'cus_1',
      traceId: TRACE_ID,
      attempts: 0,
      receivedAt: new Date(RECEIVED).toISOString(),
      updatedAt: new Date(T(1)).toISOString(),
      history: [{ at: new Date(T(1)).toISOString(), state: 'received', note: 'migrated' }],
    });
    expect(pending.envelope && encodeEnvelope(pending.envelope)).toBe(encodeEnvelope(traced));
    const stale = await inbox.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 });
    expect(
      stale.map((s) => s.envelope.id),
      'the relay still sees the claim',
    ).toEqual(['pending']);

    const states = await Promise.all(
      ['enqueued', 'processed', 'guard-processed', 'guard-running', 'expired'].map(async (id) => {
        const r = await get(id);
        expect(r.updatedAt, id).toBe(r.history.at(-1)?.at);
        return [id, r.state];
      }),
    );
    expect(Object.fromEntries(states)).toEqual({
      enqueued: 'enqueued',
      processed: 'completed',
      'guard-processed': 'completed',
      'guard-running': 'processing',
      expired: 'processing',
    });
    expect((await get('processed')).updatedAt).toBe(new Date(T(3)).toISOString());

    for (const id of ['dead-claimed', 'dead-unclaimed']) {
      const r = await get(id);
      expect(r, id).toMatchObject({
        state: 'dead-lettered',
        reason: 'attempts exhausted',
        attempts: 5,
        lastError: FAILURE,
        type: 'test.event',
      });
      expect(r.history.at(-1), id).toMatchObject({
        state: 'dead-lettered',
        attempt: 5,
        code: 'RETRY_LATER',
        note: 'migrated from the dead letters of queue webhooks',
      });
      expect(r.updatedAt).toBe(r.history.at(-1)?.at);
      expect(r.envelope?.id, 'kept for a redrive').toBe(id);
    }
    expect((await get('dead-claimed')).history.map((h) => h.state)).toEqual([
      'enqueued',
      'dead-lettered',
    ]);
    expect(await records.count({ state: 'dead-lettered' })).toBe(2);
    const tables = embedded.db
      .prepare(`SELECT name FROM sqlite_master WHERE name = 'onceflow_dead_letters'`)
      .all();
    expect(tables, 'the transport table is gone').toEqual([]);

    const begin = (id: string) => records.begin(event(id), { leaseMs: 60_000, attempt: 2 });
    expect(await begin('processed')).toEqual({ status: 'processed' });
    expect(await begin('guard-processed')).toEqual({ status: 'processed' });
    expect((await begin('guard-running')).status, 'the live lease holds').toBe('busy');
    expect((await begin('expired')).status, 'the run-out lease is taken').toBe('acquired');
    expect((await begin('enqueued')).status).toBe('acquired');
    expect(await inbox.claim(event('processed'), { leaseMs: 1000 })).toEqual({
      status: 'duplicate',
    });
    expect(await inbox.stats()).toMatchObject({ pending: 1, enqueued: 2, processed: 2 });
  });

  it('is applied once, and refuses a file whose schema is newer than the package', () => {
    const { db } = fileAtVersion1();
    try {
      expect(applyMigrations(db)).toBe(MIGRATIONS.length - 1);
      expect(applyMigrations(db)).toBe(0);
      db.prepare('INSERT INTO onceflow_migrations VALUES (?, 0)').run(MIGRATIONS.length + 1);
      expect(() => applyMigrations(db)).toThrow(/newer than this @onceflow\/embedded/);
    } finally {
      db.close();
    }
  });

  it('several processes migrating one file at once: one applies it, the others find it done', async () => {
    const { path, db } = fileAtVersion1();
    for (let i = 0; i < 200; i++) {
      insertV1(db, { ...claimed(event(`evt_${i}`)), state: 'enqueued', processed_at: T(3) });
    }
    db.close();
    const script = fileURLToPath(new URL('./fixtures/migrate-process.ts', import.meta.url));
    const run = promisify(execFile);
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () =>
        run(process.execPath, ['--conditions=@onceflow/source', '--import', 'tsx', script, path]),
      ),
    );
    const applied = outputs.map((o) => Number(o.stdout)).sort();
    expect(applied).toEqual([0, 0, 0, MIGRATIONS.length - 1]);

    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare('SELECT version FROM onceflow_migrations').pluck().all()).toEqual(
        MIGRATIONS.map((_, i) => i + 1),
      );
      expect(
        check.prepare(`SELECT state, count(*) AS n FROM onceflow_inbox GROUP BY state`).all(),
      ).toEqual([{ state: 'completed', n: 200 }]);
    } finally {
      check.close();
    }
  }, 60_000);
});
