import { encodeEnvelope } from '@onceflow/core/kit';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { event, tempDbPath } from './helpers.js';

const DAY_MS = 86_400_000;
const START = Date.parse('2026-11-01T00:00:00.000Z');
/** The event of row i, its payload large enough that a `WITHOUT ROWID` row spilled. */
const stored = (i: number) => event(`evt_${i}`, { payload: { note: 'p'.repeat(900) } });
const STATES = ['received', 'enqueued', 'processing', 'retry-scheduled', 'completed'] as const;

/** A file at schema version 4, as the previous release left it, with `rows` records. */
function fileAtVersion4(
  rows: number,
  // Times in an order unrelated to the ids, so the copy's order shows in the rowids.
  receivedAt = (i: number) => START + ((i * 7919) % rows) * 1000,
  stateOf = (i: number) => (i === 7 ? 'dead-lettered' : STATES[i % STATES.length]!),
): string {
  const path = tempDbPath();
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE onceflow_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
      ${MIGRATIONS.slice(0, 4).join(';\n')};
      INSERT INTO onceflow_migrations VALUES (1, 0), (2, 0), (3, 0), (4, 0);`);
    const insert = db.prepare(`INSERT INTO onceflow_inbox (source, id, state, processing_token,
      processing_expires_at, claim_token, claim_expires_at, claimed_at, payload_hash, received_at,
      updated_at, attempts, next_attempt_at, type, ordering_key, consumer, trace_id, reason,
      last_error, history, envelope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (let i = 0; i < rows; i++) {
      const state = stateOf(i);
      const at = receivedAt(i);
      const env = stored(i);
      insert.run(
        i % 2 ? 'stripe' : 'test',
        `evt_${i}`,
        state,
        state === 'processing' ? `lease-${i}` : null,
        state === 'processing' ? at + 30_000 : null,
        state === 'received' ? `claim-${i}` : null,
        state === 'received' ? at + 30_000 : null,
        at,
        env.payloadHash,
        at,
        at + 60,
        i % 3,
        state === 'retry-scheduled' ? at + 5000 : null,
        'order.paid',
        i % 4 ? `cus_${i % 4}` : null,
        'worker-a',
        'a'.repeat(32),
        state === 'dead-lettered' ? 'attempts exhausted' : null,
        state === 'dead-lettered' ? '{"code":"INTERNAL","name":"Error","message":"x"}' : null,
        JSON.stringify([{ at: new Date(at).toISOString(), state }]),
        encodeEnvelope(env),
      );
    }
  } finally {
    db.close();
  }
  return path;
}

const everyRow = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT * FROM onceflow_inbox ORDER BY source, id').all();
  } finally {
    db.close();
  }
};

describe('migration to a rowid inbox table (schema version 5)', () => {
  it('keeps every column of every record, in the order received, under the same key and indexes', async () => {
    const path = fileAtVersion4(500);
    const before = everyRow(path);
    {
      await using embedded = createEmbedded({ path });
      await embedded.start();
      expect(await embedded.records.get('stripe', 'evt_1')).toMatchObject({
        state: 'enqueued',
        key: 'cus_1',
      });
      expect(await embedded.records.count({ state: 'dead-lettered' })).toBe(1);
      // The key is still unique: a second claim of a migrated event is a duplicate.
      const again = await embedded.inbox.claim(stored(4), { leaseMs: 1000 });
      expect(again.status).toBe('duplicate');
    }
    expect(everyRow(path)).toEqual(before);

    const db = new Database(path, { readonly: true });
    try {
      const table = db
        .prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'onceflow_inbox'`)
        .pluck()
        .get() as string;
      expect(table).not.toMatch(/WITHOUT ROWID/i);
      const indexes = db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'onceflow_inbox'
          AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name`)
        .pluck()
        .all();
      expect(indexes).toEqual([
        'onceflow_inbox_dead_letters',
        'onceflow_inbox_pending',
        'onceflow_inbox_received',
      ]);
      const times = db
        .prepare('SELECT received_at FROM onceflow_inbox ORDER BY rowid')
        .pluck()
        .all() as number[];
      expect(times, 'copied in the order received').toEqual([...times].sort((a, b) => a - b));
    } finally {
      db.close();
    }
  });

  it('a purge of the oldest day removes exactly its records after the migration', async () => {
    // Two days, one record a minute.
    const path = fileAtVersion4(
      2 * 24 * 60,
      (i) => START + i * 60_000,
      () => 'completed',
    );
    await using embedded = createEmbedded({ path, purgeBatchSize: 100, purgePauseRatio: 0 });
    await embedded.start();
    const removed = await embedded.inbox.purge({ olderThan: new Date(START + DAY_MS) });
    expect(removed).toBe(24 * 60);
    expect(await embedded.records.count({})).toBe(24 * 60);
  });
});
