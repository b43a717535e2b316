import { describe, expect, it } from 'vitest';
import { sweepTable, withSweepSection } from '../src/report.js';
import { FULL_SWEEP, type SweepResult } from '../src/sweep.js';

const result = (over: Partial<SweepResult>): SweepResult => ({
  stack: 'embedded',
  mode: 'helper',
  seed: 1000,
  events: 10_000,
  accepted: 10_000,
  processed: 10_000,
  lost: 0,
  doubled: 0,
  extraRows: 0,
  unexpected: 0,
  forgedAccepted: 0,
  gaveUp: 0,
  outageMisanswers: 0,
  redeliveryRate: 0.01,
  p50Ms: 100,
  p99Ms: 3000,
  failed: false,
  durationMs: 180_000,
  faults: [],
  date: '2026-12-01T21:00:00.000Z',
  commit: 'abc1234def0',
  load: 2,
  ...over,
});
const doc = [
  '# Reliability under faults',
  '',
  '## What was run',
  '',
  'earlier runs',
  '',
  '## The full sweep',
  '',
  'not run yet',
  '',
  '## Soak',
  '',
  'soak table',
  '',
].join('\n');
const row = (table: string, stack: string, mode: string) =>
  table.split('\n').find((l) => l.startsWith(`| ${stack} | ${mode} |`));

describe('withSweepSection', () => {
  it('replaces only the full sweep section and keeps what comes before and after it', () => {
    const out = withSweepSection(doc, [result({})], 'docs/reliability-sweep.jsonl');
    expect(out).toContain('earlier runs');
    expect(out).toContain('## Soak\n\nsoak table');
    expect(out).not.toContain('not run yet');
    expect(out).toContain('pnpm chaos --full');
    expect(out).toContain('`docs/reliability-sweep.jsonl`');
    expect(out).toContain('commits abc1234');
    expect(out).toContain('| embedded | helper | 1 of 20 | 1000 |');
    expect(out.indexOf('## The full sweep')).toBeLessThan(out.indexOf('## Soak'));
  });

  it('appends the section to a doc that has none', () => {
    const out = withSweepSection('# Reliability under faults\n', [], 'sweep.jsonl');
    expect(out.startsWith('# Reliability under faults\n\n## The full sweep\n')).toBe(true);
  });
});

describe('sweepTable', () => {
  it('has a row for every stack and handler of the full plan, runs or not', () => {
    const table = sweepTable([]);
    for (const stack of FULL_SWEEP.stacks)
      for (const mode of FULL_SWEEP.modes)
        expect(row(table, stack, mode)).toBe(
          `| ${stack} | ${mode} | 0 of 20 | – | – | – | – | – | – | – | – | – | – |`,
        );
    expect(table).toContain('**0 of 200 runs done: the full sweep is not complete.**');
  });

  it('sums the counts of a stack and handler, and weighs redelivery by processed events', () => {
    const table = sweepTable([
      result({ seed: 8919, processed: 10_000, redeliveryRate: 0.02, p50Ms: 300, p99Ms: 9000 }),
      result({ seed: 1000, processed: 9_990, accepted: 9_990, redeliveryRate: 0, p50Ms: 100 }),
      result({ seed: 16838, processed: 10_000, redeliveryRate: 0.01, p50Ms: 200 }),
      result({ mode: 'plain', doubled: 7, durationMs: 60_000 }),
    ]);
    expect(row(table, 'embedded', 'helper')).toBe(
      '| embedded | helper | 3 of 20 | 1000, 8919, 16838 | 29990 | 29990 | 0 | 0 | 1.0% | 200 | 9000 | 3.0 | 0 |',
    );
    expect(row(table, 'embedded', 'plain')).toBe(
      '| embedded | plain | 1 of 20 | 1000 | 10000 | 10000 | 0 | 7 | 1.0% | 100 | 3000 | 1.0 | 0 |',
    );
    expect(table).toContain('**4 of 200 runs done: the full sweep is not complete.**');
  });

  it('keeps a failed run in its row, counted as failed, and lists it below', () => {
    const table = sweepTable([result({ stack: 'bullmq', lost: 2, failed: true })]);
    expect(row(table, 'bullmq', 'helper')).toMatch(
      /\| 1 of 20 \| 1000 \| 10000 \| 10000 \| 2 \| 0 \|.*\| 1 \|$/,
    );
    expect(table).toContain('- FAILED bullmq/helper seed 1000: accepted 10000, lost 2, doubled 0');
  });

  it('lists a run whose broker broke below the table, its events lost with the broker apart from lost', () => {
    const table = sweepTable([
      result({
        stack: 'sqs',
        brokerLost: 423,
        brokerDefects: ["ElasticMQ's persistence actor failed"],
      }),
    ]);
    expect(row(table, 'sqs', 'helper')).toMatch(
      /\| 1 of 20 \| 1000 \| 10000 \| 10000 \| 0 \| 0 \|.*\| 0 \|$/,
    );
    expect(table).toContain(
      "- broker defect in sqs/helper seed 1000: 423 accepted events lost with the broker; ElasticMQ's persistence actor failed",
    );
  });

  it('counts runs outside the full plan apart, and a run twice once', () => {
    const table = sweepTable([
      result({ events: 300 }),
      result({ stack: 'bullmq+pg-restart' }),
      result({}),
      result({ p99Ms: 4000 }),
    ]);
    expect(row(table, 'embedded', 'helper')).toContain('| 1 of 20 | 1000 | 10000 |');
    expect(row(table, 'embedded', 'helper')).toContain('| 4000 |');
    expect(table).toContain('2 other runs in the results file');
  });

  it('says the sweep is done once all 200 runs are', () => {
    const all = FULL_SWEEP.stacks.flatMap((stack) =>
      FULL_SWEEP.modes.flatMap((mode) =>
        FULL_SWEEP.seeds.map((seed) => result({ stack, mode, seed })),
      ),
    );
    const table = sweepTable(all);
    expect(table).toContain('All 200 runs of the full sweep are done.');
    expect(table).not.toContain('not complete');
  });
});
