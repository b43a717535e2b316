#!/usr/bin/env node
// `pnpm bench`: runs every package's benchmark one after another (2 cores: never two at once),
// prints their output as it comes, and writes docs/benchmarks.md: the machine, the load average
// before and after each bench, the method, a summary of every onceflow-vs-raw ratio row, and each
// bench's full output. Benchmarks never fail on a time; this exits non-zero only when a bench
// crashed. `pnpm bench <pkg-folder> …` (e.g. `pnpm bench adapter-kafka`) runs only those.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv.slice(2);
const benches = ['packages', 'apps']
  .flatMap((d) => readdirSync(join(root, d)).map((p) => ({ folder: p, dir: join(root, d, p) })))
  .filter(({ dir }) => existsSync(join(dir, 'package.json')))
  .map((b) => ({ ...b, manifest: JSON.parse(readFileSync(join(b.dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => manifest.scripts?.bench)
  .filter(({ folder }) => only.length === 0 || only.includes(folder));

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const temp = mkdtempSync(join(tmpdir(), 'onceflow-bench-'));
const rowsFile = join(temp, 'rows.jsonl');

/** Runs one bench, echoing its output, and resolves with what it printed and its exit code. */
function runBench({ dir }) {
  return new Promise((resolve) => {
    const child = spawn('pnpm', ['run', '--silent', 'bench'], {
      cwd: dir,
      env: { ...process.env, ONCEFLOW_BENCH_ROWS: rowsFile, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code) => resolve({ output, code: code ?? 1 }));
  });
}

/** Writes docs/benchmarks.md from the benches run so far (after each one, so a stopped run keeps what it measured). */
function writeReport(done) {
  const rows = existsSync(rowsFile)
    ? readFileSync(rowsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

  const costs = rows.filter((r) => r.kind === 'cost');
  const ratios = rows.filter((r) => r.kind !== 'cost');
  const rate = (n) => `${Math.round(n).toLocaleString('en')}/s`;
  const figure = (n, unit) =>
    n === undefined || n === null
      ? ''
      : `${n >= 100 ? Math.round(n).toLocaleString('en') : n.toFixed(2)} ${unit}`;
  const cpu = cpus();
  const md = [
    '# Benchmarks',
    '',
    `Written by \`pnpm bench\` on ${started.toISOString()}. Benchmarks never fail CI on a time; read`,
    'the ratios (onceflow beside the raw client, measured side by side in the same run), not the',
    'absolute rates, which swing with whatever else the machine is doing.',
    '[performance.md](performance.md) says, for each aim not met, what the profile shows.',
    '',
    '## Machine',
    '',
    `- ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node.js ${process.version}, ${process.platform}/${process.arch}`,
    `- load average (1, 5, 15 min) at the start: ${done[0]?.before ?? load()}, at the end: ${load()}`,
    '',
    '## Method',
    '',
    '- Each bench runs alone (one after another). Within a bench, onceflow and the raw client run in',
    '  interleaved rounds (a, b, a, b, …) so load from elsewhere hits both alike; each figure is the',
    '  median round. Brokers and databases are the local ones the tests use (loopback).',
    '- "raw" is the broker client used directly for the same work (same message size, concurrency',
    '  and guarantees where the raw client can give them); each bench names what its raw side does.',
    '',
    '## Summary: onceflow vs the raw client',
    '',
    '| bench | path | onceflow | raw | ratio | aim |',
    '|---|---|---:|---:|---:|---|',
    ...ratios.map(
      (r) =>
        `| ${r.title} | ${r.name} | ${rate(r.ours)} | ${rate(r.raw)} | ${r.ratio.toFixed(2)}× | ≥ ${r.aim.toFixed(2)}× ${r.ratio >= r.aim ? 'met' : '**not met**'} |`,
    ),
    ...(ratios.length === 0 ? ['| (no comparison rows printed) | | | | | |'] : []),
    '',
    '## Summary: cost as the work grows',
    '',
    'Each figure beside the same measure at the baseline (an empty store, no purge running), in the',
    'same run; the aim is the highest ratio wanted.',
    '',
    '| bench | measure | value | baseline | ratio | aim |',
    '|---|---|---:|---:|---:|---|',
    ...costs.map(
      (r) =>
        `| ${r.title} | ${r.name} | ${figure(r.value, r.unit)} | ${figure(r.baseline, r.unit)} | ${r.ratio === undefined || r.ratio === null ? '' : `${r.ratio.toFixed(2)}×`} | ${r.aim === undefined || r.aim === null ? '' : `≤ ${r.aim.toFixed(2)}× ${r.ratio <= r.aim ? 'met' : '**not met**'}`} |`,
    ),
    ...(costs.length === 0 ? ['| (no cost rows printed) | | | | | |'] : []),
    '',
    'Benches that print their own tables (receiver latency, PostgreSQL inbox, costs per request)',
    'appear below only.',
    '',
    ...done.flatMap((s) => [
      `## ${s.manifest.name}`,
      '',
      `\`${s.manifest.scripts.bench}\` in \`${s.dir.slice(root.length)}\`: ${s.seconds} s, load average ${s.before} before, ${s.after} after${s.code === 0 ? '' : `, **exited ${s.code}**`}.`,
      '',
      '```text',
      s.output.trimEnd(),
      '```',
      '',
    ]),
  ].join('\n');
  writeFileSync(join(root, 'docs', 'benchmarks.md'), md);
  return rows.length;
}

const started = new Date();
const sections = [];
let crashed = 0;
for (const bench of benches) {
  const before = load();
  const t0 = Date.now();
  console.log(`\n=== ${bench.manifest.name} (load average ${before})`);
  const { output, code } = await runBench(bench);
  if (code !== 0) crashed++;
  sections.push({
    ...bench,
    before,
    after: load(),
    seconds: Math.round((Date.now() - t0) / 1000),
    output,
    code,
  });
  writeReport(sections);
}
const rowCount = writeReport(sections);
rmSync(temp, { recursive: true, force: true });

console.log(`\nwrote docs/benchmarks.md (${rowCount} comparison rows, ${sections.length} benches)`);
process.exit(crashed ? 1 : 0);
