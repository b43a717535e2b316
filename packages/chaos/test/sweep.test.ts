import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Summary } from '../src/checker.js';
import {
  appendResult,
  parseResults,
  pendingRuns,
  readResults,
  type SweepResult,
  toResult,
  withinBudget,
} from '../src/sweep.js';

const summary = {
  stack: 'embedded',
  mode: 'helper',
  seed: 1000,
  events: 10_000,
  accepted: 10_000,
  processed: 10_000,
  lost: 0,
  brokerLost: 0,
  brokerDefects: [],
  doubled: 0,
  failed: false,
  durationMs: 120_000,
  faults: ['worker ended (SIGKILL)'],
} as unknown as Summary;
const meta = { date: '2026-12-01T21:00:00.000Z', commit: 'abc1234def', load: 2.5 };
const result = (over: Partial<SweepResult> = {}): SweepResult => ({
  ...toResult(summary, meta),
  ...over,
});

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const tmpFile = () => {
  dir = mkdtempSync(join(tmpdir(), 'chaos-sweep-'));
  return join(dir, 'sweep.jsonl');
};

describe('the results file', () => {
  it('keeps the checker counts, duration, date and commit of a run', () => {
    const r = toResult(summary, meta);
    expect(r).toMatchObject({
      stack: 'embedded',
      mode: 'helper',
      seed: 1000,
      events: 10_000,
      lost: 0,
      durationMs: 120_000,
      date: meta.date,
      commit: meta.commit,
      load: 2.5,
    });
  });

  it('keeps what the broker lost and its defects, on a run where it broke', () => {
    const broke = { ...summary, brokerLost: 423, brokerDefects: ['ElasticMQ failed'] } as Summary;
    expect(toResult(broke, meta)).toMatchObject({
      brokerLost: 423,
      brokerDefects: ['ElasticMQ failed'],
    });
    expect(toResult(summary, meta)).not.toHaveProperty('brokerLost');
  });

  it('appends one line per run and reads them back in order', () => {
    const path = tmpFile();
    expect(readResults(path)).toEqual([]);
    appendResult(path, result({ seed: 1000 }));
    appendResult(path, result({ seed: 8919, lost: 1, failed: true }));
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(3);
    expect(readResults(path).map((r) => [r.seed, r.failed])).toEqual([
      [1000, false],
      [8919, true],
    ]);
  });

  it('skips a line cut short, says so, and the next run starts on a line of its own', () => {
    const path = tmpFile();
    writeFileSync(path, `${JSON.stringify(result({ seed: 1000 }))}\n{"stack":"embe`);
    expect(readResults(path).map((r) => r.seed)).toEqual([1000]);
    appendResult(path, result({ seed: 8919 }));
    const malformed: number[] = [];
    expect(readResults(path, (line) => malformed.push(line)).map((r) => r.seed)).toEqual([
      1000, 8919,
    ]);
    expect(malformed).toEqual([2]);
    expect(parseResults('not json\n').length).toBe(0);
  });
});

describe('resuming', () => {
  const planned = [1000, 8919].flatMap((seed) =>
    (['helper', 'plain'] as const).map((mode) => ({
      stack: 'embedded',
      mode,
      seed,
      events: 10_000,
    })),
  );

  it('skips the (stack, mode, seed, events) runs already done, failed ones included', () => {
    const done = [
      result({ seed: 1000, mode: 'helper' }),
      result({ seed: 8919, mode: 'plain', failed: true }),
    ];
    expect(pendingRuns(planned, done)).toEqual([
      { stack: 'embedded', mode: 'plain', seed: 1000, events: 10_000 },
      { stack: 'embedded', mode: 'helper', seed: 8919, events: 10_000 },
    ]);
  });

  it('does not take a run of another size, stack or PostgreSQL label for a planned one', () => {
    const done = [
      result({ events: 300 }),
      result({ stack: 'rabbitmq' }),
      result({ stack: 'embedded+pg-restart' }),
    ];
    expect(pendingRuns(planned, done)).toEqual(planned);
  });

  it('starts runs until the budget is spent, and always without one', () => {
    const t0 = 1_000_000;
    expect(withinBudget(t0, 10, t0 + 9 * 60_000)).toBe(true);
    expect(withinBudget(t0, 10, t0 + 10 * 60_000)).toBe(false);
    expect(withinBudget(t0, undefined, t0 + 1e9)).toBe(true);
  });
});
