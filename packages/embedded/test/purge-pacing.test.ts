import { ConfigError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded, type Embedded } from '../src/index.js';
import { tempDbPath, waitFor } from './helpers.js';

const OLD = Date.parse('2020-01-01');
const olderThan = new Date('2021-01-01');

/** `n` completed records received in 2020, and one conflict record seen then. */
function fill(embedded: Embedded, n: number): void {
  const db = embedded.db;
  const insert = db.prepare(
    `INSERT INTO onceflow_inbox (source, id, state, received_at, updated_at)
     VALUES ('test', ?, 'completed', ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`done_${i}`, OLD + i, OLD + i);
    db.prepare(
      `INSERT INTO onceflow_inbox_conflicts (source, id, payload_hash, seen_at)
       VALUES ('test', 'done_0', 'h', ?)`,
    ).run(OLD);
  })();
}

const count = (embedded: Embedded): number =>
  (embedded.db.prepare('SELECT count(*) AS n FROM onceflow_inbox').get() as { n: number }).n;

describe('embedded purge pacing', () => {
  it('deletes nothing when the signal is already aborted', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), purgeBatchSize: 100 });
    await embedded.start();
    fill(embedded, 250);
    const purged = await embedded.inbox.purge({ olderThan, signal: AbortSignal.abort() });
    expect(purged).toBe(0);
    expect(count(embedded)).toBe(250);
    expect((await embedded.inbox.stats()).conflicts).toBe(1);
  });

  it('pauses after each batch, and an abort in the pause ends the purge after that batch', async () => {
    // A pause 1000 times the batch's run time: the purge sits in it after the first batch.
    await using embedded = createEmbedded({
      path: tempDbPath(),
      purgeBatchSize: 100,
      purgePauseRatio: 1000,
    });
    await embedded.start();
    fill(embedded, 250);
    embedded.db.prepare('DELETE FROM onceflow_inbox_conflicts').run();
    const stop = new AbortController();
    let settled = false;
    const purge = embedded.inbox.purge({ olderThan, signal: stop.signal }).finally(() => {
      settled = true;
    });
    await waitFor(() => count(embedded) === 150, 5000, 'the first batch');
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    expect(count(embedded)).toBe(150);
    stop.abort();
    expect(await purge).toBe(100);
    expect(count(embedded)).toBe(150);
  });

  it('runs batches back to back with a pause ratio of 0, and the next purge goes on', async () => {
    await using embedded = createEmbedded({
      path: tempDbPath(),
      purgeBatchSize: 100,
      purgePauseRatio: 0,
      synchronous: 'normal',
    });
    await embedded.start();
    fill(embedded, 250);
    expect(await embedded.inbox.purge({ olderThan })).toBe(250);
    expect(count(embedded)).toBe(0);
    expect((await embedded.inbox.stats()).conflicts).toBe(0);
  });

  it('refuses a batch size below 1 and a negative pause ratio', () => {
    expect(() => createEmbedded({ path: tempDbPath(), purgeBatchSize: 0 })).toThrow(ConfigError);
    expect(() => createEmbedded({ path: tempDbPath(), purgePauseRatio: -1 })).toThrow(ConfigError);
  });
});
