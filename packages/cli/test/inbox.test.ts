import { createEnvelope } from '@onceflow/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../src/run.js';
import { captureOutput, event, open, seed, tempDbPath } from './helpers.js';

let db: string;
const run = (...argv: string[]) => {
  const io = captureOutput();
  return runCli([...argv, '--db', db], { output: io.output }).then((code) => ({ code, ...io }));
};

const DAY = 86_400_000;
const daysAgo = (d: number) => new Date(Date.now() - d * DAY).toISOString();

beforeEach(async () => {
  db = tempDbPath();
  await seed(db, {
    completed: [
      event('old_1', { receivedAt: daysAgo(40) }),
      event('new_1', { receivedAt: daysAgo(1) }),
    ],
    enqueued: [
      event('old_2', { receivedAt: daysAgo(35) }),
      event('new_2', { receivedAt: daysAgo(2) }),
    ],
    received: [event('old_3', { receivedAt: daysAgo(50) })],
  });
  const embedded = await open(db);
  try {
    const other = createEnvelope({
      id: 'new_1',
      source: 'stripe',
      type: 'charge.succeeded',
      payload: 'other bytes',
    });
    expect((await embedded.inbox.claim(other, { leaseMs: 1000 })).status).toBe('conflict');
    await embedded.inbox.recordConflict(other);
  } finally {
    await embedded.close();
  }
});

describe('inbox stats', () => {
  it('prints the counters and the oldest unprocessed age', async () => {
    const { code, out } = await run('inbox', 'stats');
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^pending:\s+1$/);
    expect(out[1]).toMatch(/^enqueued:\s+2$/);
    expect(out[2]).toMatch(/^processed:\s+2$/);
    expect(out[3]).toMatch(/^conflicts:\s+1$/);
    expect(out[4]).toMatch(/^oldest unprocessed:\s+50d( \dh)? ago \(\d{4}-/);
  });

  it('--json gives numbers and the age in ms', async () => {
    const { code, json } = await run('inbox', 'stats', '--json');
    expect(code).toBe(0);
    const stats = json();
    expect(stats).toMatchObject({ pending: 1, enqueued: 2, processed: 2, conflicts: 1 });
    expect(stats.oldestUnprocessedAgeMs).toBeGreaterThanOrEqual(50 * DAY);
    expect(stats.oldestUnprocessedAgeMs).toBeLessThan(51 * DAY);
  });
});

describe('inbox purge', () => {
  it('is a dry run by default: counts what it would delete, deletes nothing', async () => {
    const before = (await run('inbox', 'stats', '--json')).json();
    const { code, out } = await run('inbox', 'purge', '--older-than', '30d');
    expect(code).toBe(0);
    expect(out[0]).toMatch(
      /^DRY RUN: would purge 2 enqueued, completed or discarded events received before \S+\. Nothing was changed\.$/,
    );
    expect(out.join('\n')).toContain('A purged id is forgotten');
    expect((await run('inbox', 'stats', '--json')).json()).toEqual({
      ...before,
      oldestUnprocessedAgeMs: expect.any(Number),
    });
  });

  it('with --apply deletes old enqueued and completed records, never received ones', async () => {
    const { code, json } = await run('inbox', 'purge', '--older-than', '30d', '--apply', '--json');
    expect(code).toBe(0);
    expect(json()).toMatchObject({ action: 'purge', dryRun: false, count: 2 });
    expect((await run('inbox', 'stats', '--json')).json()).toMatchObject({
      pending: 1,
      enqueued: 1,
      processed: 1,
    });
  });
});
