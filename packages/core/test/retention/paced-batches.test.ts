import { describe, expect, it } from 'vitest';
import { purgeInPacedBatches } from '../../src/kit.js';

/** A delete of `rows` rows in batches, each taking `batchMs` on a fake clock. */
function fakeTable(rows: number, batchMs: number) {
  let left = rows;
  let clock = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => clock,
    pause: async (ms: number) => {
      pauses.push(ms);
      clock += ms;
    },
    deleteBatch: (size: number) => async () => {
      clock += batchMs;
      const n = Math.min(size, left);
      left -= n;
      return n;
    },
  };
}

describe('purgeInPacedBatches', () => {
  it('deletes until a batch comes back short, pausing pauseRatio × each batch between them', async () => {
    const t = fakeTable(2500, 10);
    const total = await purgeInPacedBatches(t.deleteBatch(1000), {
      batchSize: 1000,
      pauseRatio: 3,
      now: t.now,
      pause: t.pause,
    });
    expect(total).toBe(2500);
    expect(t.pauses).toEqual([30, 30]);
  });

  it('runs batches back to back with pauseRatio 0, and stops on an exact multiple after one empty batch', async () => {
    const t = fakeTable(2000, 10);
    const total = await purgeInPacedBatches(t.deleteBatch(1000), {
      batchSize: 1000,
      pauseRatio: 0,
      now: t.now,
      pause: t.pause,
    });
    expect(total).toBe(2000);
    expect(t.pauses).toEqual([]);
  });

  it('stops between batches when the signal aborts and resolves with the rows deleted so far', async () => {
    const t = fakeTable(10_000, 10);
    const abort = new AbortController();
    let batches = 0;
    const total = await purgeInPacedBatches(
      async () => {
        batches += 1;
        if (batches === 2) abort.abort();
        return t.deleteBatch(1000)();
      },
      { batchSize: 1000, pauseRatio: 1, signal: abort.signal, now: t.now, pause: t.pause },
    );
    expect(total).toBe(2000);
    expect(t.pauses).toEqual([10]);
  });

  it('deletes nothing when the signal is already aborted', async () => {
    const t = fakeTable(10, 1);
    const total = await purgeInPacedBatches(t.deleteBatch(1000), {
      batchSize: 1000,
      pauseRatio: 1,
      signal: AbortSignal.abort(),
    });
    expect(total).toBe(0);
  });

  it('ends a real pause early when the signal aborts', async () => {
    const abort = new AbortController();
    const started = performance.now();
    const run = purgeInPacedBatches(
      async () => {
        await new Promise((r) => setTimeout(r, 20));
        return 10;
      },
      { batchSize: 10, pauseRatio: 1000, signal: abort.signal },
    );
    setTimeout(() => abort.abort(), 60);
    expect(await run).toBe(10);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('rejects when a batch throws, after the batches before it', async () => {
    let calls = 0;
    const run = purgeInPacedBatches(
      async () => {
        calls += 1;
        if (calls === 2) throw new Error('database went away');
        return 5;
      },
      { batchSize: 5, pauseRatio: 0 },
    );
    await expect(run).rejects.toThrow('database went away');
    expect(calls).toBe(2);
  });
});
