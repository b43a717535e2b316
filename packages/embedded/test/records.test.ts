import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEnvelope } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { event, tempDbPath } from './helpers.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('embedded event record', () => {
  it('of four processes beginning the same 500 events at once, each event is acquired by exactly one', async () => {
    const path = tempDbPath();
    await using embedded = createEmbedded({ path });
    await embedded.start();
    // Each starts a quarter further on and wraps around, so all 500 are contended by the end.
    const children = Array.from({ length: 4 }, (_, i) =>
      fork(fixture('begin-process.ts'), [path, '500', String(i * 125)], {
        execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    try {
      const said = (child: ChildProcess) =>
        new Promise<unknown>((resolve, reject) => {
          child.once('message', resolve);
          child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
        });
      await Promise.all(children.map(said)); // every process has loaded and opened the file
      const results = children.map(said);
      for (const child of children) child.send('go');
      const each = (await Promise.all(results)) as string[][];
      const acquired = each.flat();
      expect(acquired).toHaveLength(500);
      expect(new Set(acquired).size).toBe(500);
      expect(each.filter((ids) => ids.length > 0).length, 'they competed').toBeGreaterThan(1);
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    }
    const record = await embedded.records.get('test', 'evt_7');
    expect(record?.history, 'one attempt started').toHaveLength(1);
  }, 60_000);

  it('lists dead letters through their partial index, with the cursor as a range on it', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    for (let i = 0; i < 3; i++) {
      await embedded.records.deadLetter(event(`evt_${i}`), undefined, {
        reason: 'attempts exhausted',
        attempts: 5,
      });
    }
    const first = await embedded.records.list({ state: 'dead-lettered', limit: 2 });
    expect(first.records.map((r) => r.id)).toEqual(['evt_0', 'evt_1']);
    const plan = (sql: string) =>
      (embedded.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 'x', 'y', 3) as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
    const paged = plan(
      `SELECT source, id FROM onceflow_inbox WHERE state = 'dead-lettered'
       AND (updated_at, source, id) > (?, ?, ?) ORDER BY updated_at, source, id LIMIT ?`,
    );
    expect(paged).toMatch(/USING (COVERING )?INDEX onceflow_inbox_dead_letters/);
    expect(paged).not.toMatch(/TEMP B-TREE/);
    const rest = await embedded.records.list({
      state: 'dead-lettered',
      limit: 2,
      cursor: first.next,
    });
    expect(rest.records.map((r) => r.id)).toEqual(['evt_2']);
    expect(rest.next).toBe(undefined);
  });

  it('keeps records across a reopen of the file, envelope and history included', async () => {
    const path = tempDbPath();
    const env = createEnvelope({ id: 'evt_1', source: 'test', type: 't', payload: 'x' });
    const first = createEmbedded({ path });
    const begun = await first.records.begin(env, { leaseMs: 60_000, attempt: 3, consumer: 'w' });
    if (begun.status !== 'acquired') throw new Error(begun.status);
    await first.records.deadLetter(env, begun.token, { reason: 'schema: bad', attempts: 3 });
    const before = await first.records.get('test', 'evt_1');
    await first.close();

    await using second = createEmbedded({ path });
    expect(await second.records.get('test', 'evt_1')).toEqual(before);
    expect(before?.history.map((h) => [h.state, h.actor])).toEqual([
      ['processing', 'w'],
      ['dead-lettered', 'w'],
    ]);
  });

  it('purges in batches, past kept records, and counts what it removed', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), synchronous: 'normal' });
    const old = (id: string) =>
      createEnvelope({
        id,
        source: 'test',
        type: 't',
        payload: id,
        receivedAt: '2020-01-01T00:00:00Z',
      });
    // Dead letters received first: each batch must pass them, not stop at them.
    for (let i = 0; i < 600; i++) {
      await embedded.records.deadLetter(old(`dead_${i}`), undefined, { reason: 'r', attempts: 1 });
    }
    const mark = embedded.db.prepare(
      `INSERT INTO onceflow_inbox (source, id, state, received_at, updated_at)
       VALUES ('test', ?, 'completed', ?, ?)`,
    );
    embedded.db.transaction(() => {
      for (let i = 0; i < 1234; i++)
        mark.run(`done_${i}`, Date.parse('2020-02-01') + i, Date.now());
    })();
    expect(await embedded.inbox.purge({ olderThan: new Date('2021-01-01') })).toBe(1234);
    expect(await embedded.records.count({ state: 'dead-lettered' })).toBe(600);
    expect(await embedded.records.count({ state: 'completed' })).toBe(0);
  });

  it('refuses an invalid date filter with a UsageError; an unknown state matches nothing', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    await embedded.records.deadLetter(event('evt_1'), undefined, { reason: 'r', attempts: 1 });
    await expect(
      embedded.records.count({ updatedBefore: new Date('not a date') }),
    ).rejects.toMatchObject({ code: 'USAGE' });
    // biome-ignore lint/suspicious/noExplicitAny: a caller outside TypeScript
    expect(await embedded.records.count({ state: 'dead' as any })).toBe(0);
  });
});
