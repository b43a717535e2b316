import { randomBytes } from 'node:crypto';
import type { Envelope } from '@onceflow/core';
import { createEmbedded } from '@onceflow/embedded';
import { createPostgresInbox, migrate } from '@onceflow/inbox-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { createPostgresInboxBrowser } from '../src/targets/postgres-browser.js';
import { captureOutput, event, open, tempDbPath } from './helpers.js';

const PG_URL = process.env.ONCEFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `cli_${randomBytes(4).toString('hex')}`;
const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
const env = { ONCEFLOW_PG_URL: PG_URL, ONCEFLOW_PG_SCHEMA: schema };

const run = async (...argv: string[]) => {
  const io = captureOutput();
  const code = await runCli(['--store', 'postgres', ...argv], { output: io.output, env });
  return { code, ...io };
};

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

beforeAll(async () => {
  await migrate(pool, { schema });
  const inbox = createPostgresInbox({ pool, schema });
  const claimAll = async (envelopes: Envelope[], enqueue: boolean) => {
    for (const env of envelopes) {
      const claim = await inbox.claim(env, { leaseMs: 60_000 });
      if (claim.status !== 'new') throw new Error(`seed: ${env.id} was ${claim.status}`);
      if (enqueue) await inbox.markEnqueued(env.source, env.id, claim.token);
    }
  };
  const processed = [1, 2, 3, 4, 5].map((n) => event(`evt_${n}`, { receivedAt: daysAgo(10 - n) }));
  await claimAll(processed, true);
  for (const env of processed) {
    const begun = await inbox.begin(env, { leaseMs: 60_000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error(`seed: ${env.id} was ${begun.status}`);
    await inbox.complete(env.source, env.id, begun.token);
  }
  await claimAll([event('evt_waiting', { receivedAt: daysAgo(3) })], true);
  await claimAll([event('evt_claimed', { receivedAt: daysAgo(2) })], false);
});

afterAll(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

describe('--store postgres', () => {
  it('inbox stats', async () => {
    const { code, json } = await run('inbox', 'stats', '--json');
    expect(code).toBe(0);
    expect(json()).toMatchObject({ pending: 1, enqueued: 1, processed: 5, conflicts: 0 });
  });

  it('inbox purge dry run counts through the browser', async () => {
    const { code, json } = await run('inbox', 'purge', '--older-than', '6d12h', '--json');
    expect(code).toBe(0);
    expect(json()).toMatchObject({ dryRun: true, count: 3 });
  });

  it('asks for --to before publishing anything, and refuses a table without the event record', async () => {
    const since = daysAgo(30);
    const noTo = await run('replay', '--since', since, '--apply');
    expect(noTo.code).toBe(2);
    expect(noTo.errText()).toContain(
      'replay --apply needs --to (one of: embedded, sqs, rabbitmq, kafka, bullmq)',
    );
    const missing = await runCli(['--store', 'postgres', 'events', 'list'], {
      output: captureOutput().output,
      env: { ...env, ONCEFLOW_PG_TABLE: 'no_such_inbox' },
    });
    expect(missing).toBe(1);
    await pool.query(`CREATE TABLE "${schema}".old_inbox (source text, id text)`);
    const io = captureOutput();
    const old = await runCli(['--store', 'postgres', 'dead-letters', 'list'], {
      output: io.output,
      env: { ...env, ONCEFLOW_PG_TABLE: 'old_inbox' },
    });
    expect(old).toBe(1);
    expect(io.errText()).toContain(
      `the PostgreSQL table "${schema}"."old_inbox" has no event record (migration 002): run migrate()`,
    );
  });

  it('replays from the PostgreSQL inbox through the embedded transport with --to', async () => {
    const db = tempDbPath();
    const embedded = createEmbedded({ path: db });
    await embedded.start();
    await embedded.close();
    const since = daysAgo(30);
    const dry = await run(
      'replay',
      '--since',
      since,
      '--replay-id',
      'pg1',
      '--to',
      'embedded',
      '--db',
      db,
      '--json',
    );
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({ count: 5, skipped: 2 });
    const applied = await run(
      'replay',
      '--since',
      since,
      '--replay-id',
      'pg1',
      '--to',
      'embedded',
      '--db',
      db,
      '--apply',
    );
    expect(applied.code).toBe(0);
    expect(applied.out[0]).toMatch(/^Replayed 5 completed events .* to embedded queue "events"/);
    const check = await open(db);
    try {
      const ids = check.db
        .prepare(`SELECT dedupe_key FROM onceflow_messages WHERE queue = 'events' ORDER BY seq`)
        .all() as { dedupe_key: string }[];
      expect(ids.map((r) => r.dedupe_key)).toEqual(
        [1, 2, 3, 4, 5].map((n) => `evt_${n}#replay-pg1`),
      );
    } finally {
      await check.close();
    }
  });

  it('replays by id and by a window given as a duration, at a --rate, with progress', async () => {
    const db = tempDbPath();
    const embedded = createEmbedded({ path: db });
    await embedded.start();
    await embedded.close();
    const to = ['--to', 'embedded', '--db', db];
    const refused = await run('replay', 'stripe/evt_2', 'stripe/evt_waiting', ...to, '--apply');
    expect(refused.code).toBe(3);
    expect(refused.errText()).toContain('stripe/evt_waiting (enqueued, not completed)');
    const byId = await run('replay', 'stripe/evt_2', 'stripe/evt_4', '--replay-id', 'id1', ...to);
    expect(byId.out[0]).toBe(
      'DRY RUN: would replay 2 completed events named by id as replay id1. Nothing was published.',
    );
    const started = Date.now();
    const applied = await run(
      'replay',
      '--since',
      '7d',
      '--rate',
      '3',
      '--replay-id',
      'win1',
      ...to,
      '--apply',
    );
    expect(applied.code).toBe(0);
    // evt_3, evt_4 and evt_5 were received 7, 6 and 5 days ago: the last two are within 7d.
    expect(applied.out[0]).toMatch(/^Replayed 2 completed events /);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await run('replay', 'stripe/evt_2', '--replay-id', 'id1', ...to, '--apply');
    const check = await open(db);
    try {
      const ids = check.db
        .prepare(`SELECT dedupe_key FROM onceflow_messages WHERE queue = 'events' ORDER BY seq`)
        .all() as { dedupe_key: string }[];
      expect(ids.map((r) => r.dedupe_key)).toEqual([
        'evt_4#replay-win1',
        'evt_5#replay-win1',
        'evt_2#replay-id1',
      ]);
    } finally {
      await check.close();
    }
  });

  it('the browser pages by received time without gaps', async () => {
    const browser = createPostgresInboxBrowser(pool, `"${schema}"."onceflow_inbox"`);
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await browser.list({ limit: 2, after });
      seen.push(...page.events.map((e) => `${e.envelope.id}:${e.state}`));
      after = page.next;
    } while (after);
    expect(seen).toEqual([
      'evt_1:completed',
      'evt_2:completed',
      'evt_3:completed',
      'evt_4:completed',
      'evt_5:completed',
      'evt_waiting:enqueued',
      'evt_claimed:received',
    ]);
    expect(await browser.count({ states: ['completed'], until: new Date(daysAgo(5.5)) })).toBe(4);
  });
});
