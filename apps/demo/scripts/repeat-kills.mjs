#!/usr/bin/env node
// Runs the demo's two kill tests (a worker SIGKILLed mid-batch; workers dying at their die points)
// on every broker N times, one run after another, and prints passes per broker and test:
//   node scripts/repeat-kills.mjs [runs=20] [broker filter, e.g. sqs]
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const runs = Number(process.argv[2] ?? 20);
const broker = process.argv[3] ?? '';
const out = join(tmpdir(), `onceflow-repeat-kills-${process.pid}.json`);
const cwd = new URL('..', import.meta.url).pathname;
const tally = new Map();
for (let i = 1; i <= runs; i++) {
  rmSync(out, { force: true });
  spawnSync(
    'pnpm',
    [
      'exec',
      'vitest',
      'run',
      'test/demo.test.ts',
      '-t',
      `demo on ${broker}.*(killed mid-batch|dies after a charge)`,
      '--reporter=json',
      `--outputFile.json=${out}`,
    ],
    { cwd, stdio: 'ignore' },
  );
  const result = JSON.parse(readFileSync(out, 'utf8'));
  for (const t of result.testResults.flatMap((f) => f.assertionResults)) {
    if (t.status === 'skipped' || t.status === 'pending') continue;
    const name = `${t.ancestorTitles.join(' ').split(':')[0]} | ${t.title.includes('mid-batch') ? 'killed mid-batch' : 'die points'}`;
    const row = tally.get(name) ?? { passed: 0, failed: 0, failures: [] };
    if (t.status === 'passed') row.passed++;
    else {
      row.failed++;
      row.failures.push(`run ${i}: ${(t.failureMessages?.[0] ?? '').split('\n')[0]}`);
    }
    tally.set(name, row);
  }
  console.log(`run ${i}/${runs} done`);
}
rmSync(out, { force: true });
console.log('\n| broker | test | passed | failed |\n|---|---|---|---|');
for (const [name, row] of [...tally].sort()) {
  const [b, test] = name.split(' | ');
  console.log(`| ${b.replace('demo on ', '')} | ${test} | ${row.passed} | ${row.failed} |`);
}
for (const [name, row] of tally) for (const f of row.failures) console.log(`${name}: ${f}`);
