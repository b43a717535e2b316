/**
 * `pnpm chaos [--full] [--stacks embedded,rabbitmq] [--modes helper,plain] [--seeds 1,2,3 | --seed-count N]
 * [--events N] [--pg own] [--results file.jsonl] [--report docs/reliability.md] [--budget-minutes N]`
 *
 * The bounded sample (default): 3 seeds × 300 events per stack, helper and plain handlers.
 * `--full`: 20 seeds × 10 000 events per stack, resumable: each finished run is appended to
 * docs/reliability-sweep.jsonl, runs already there are skipped, and the sweep's section of
 * docs/reliability.md is rebuilt from the whole file after each run.
 * Exits 1 when any run lost an event, or doubled an effect with the same-transaction helper.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startBroker, startPostgres } from './brokers.js';
import { formatSummary, type Summary } from './checker.js';
import { withSweepSection } from './report.js';
import { runOnce } from './run.js';
import { type HandlerMode, STACKS, type StackName } from './stack.js';
import {
  appendResult,
  FULL_SWEEP,
  pendingRuns,
  readResults,
  toResult,
  withinBudget,
} from './sweep.js';

// `--soak`: steady load, no faults, memory and lag sampled (soak-cli.ts).
if (process.argv.includes('--soak'))
  process.exit(await (await import('./soak-cli.js')).soakMain(process.argv.slice(2)));

const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    stacks: { type: 'string' },
    modes: { type: 'string', default: 'helper,plain' },
    seeds: { type: 'string' },
    'seed-count': { type: 'string' },
    events: { type: 'string' },
    report: { type: 'string' },
    results: { type: 'string' },
    'budget-minutes': { type: 'string' },
    // `own`: the PostgreSQL stacks use a PostgreSQL of the harness's own, restarted once a run.
    pg: { type: 'string', default: 'shared' },
  },
});
const full = values.full ?? false;
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const stacks = (
  values.stacks ? list(values.stacks) : full ? [...STACKS] : ['embedded', 'rabbitmq', 'bullmq']
) as StackName[];
for (const s of stacks)
  if (!STACKS.includes(s)) throw new Error(`unknown stack ${s}: ${STACKS.join(', ')}`);
const modes = list(values.modes ?? 'helper,plain') as HandlerMode[];
const seedCount = Number(values['seed-count'] ?? (full ? FULL_SWEEP.seeds.length : 3));
const seeds = values.seeds
  ? list(values.seeds).map(Number)
  : Array.from({ length: seedCount }, (_, i) => 1000 + i * 7919);
const events = Number(values.events ?? (full ? FULL_SWEEP.events : 300));
const budgetMinutes =
  values['budget-minutes'] === undefined ? undefined : Number(values['budget-minutes']);
if (budgetMinutes !== undefined && !(budgetMinutes > 0))
  throw new Error(`--budget-minutes takes a number of minutes above 0`);
// pnpm runs this in the package's folder: a given path is taken from where the command was typed.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const at = (p: string) => resolve(process.env.INIT_CWD ?? process.cwd(), p);
const resultsPath = values.results
  ? at(values.results)
  : full
    ? resolve(root, 'docs/reliability-sweep.jsonl')
    : undefined;
const reportPath = values.report
  ? at(values.report)
  : full
    ? resolve(root, 'docs/reliability.md')
    : undefined;
if (reportPath && !resultsPath)
  throw new Error('--report rebuilds its section from a results file: give --results or --full');

const log = (line: string) => console.log(line);
const startedAt = Date.now();
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const pgLabel = (stack: StackName) =>
  values.pg === 'own' && stack !== 'embedded' ? `${stack}+pg-restart` : stack;
const planned = stacks.flatMap((stack) =>
  seeds.flatMap((seed) =>
    modes.map((mode) => ({ stack: pgLabel(stack), run: stack, mode, seed, events })),
  ),
);
const warnMalformed = (line: number, error: string) =>
  log(`results line ${line} is not JSON (${error}): skipped, its run is done again`);
const todo = resultsPath ? pendingRuns(planned, readResults(resultsPath, warnMalformed)) : planned;
log(
  `onceflow chaos: stacks ${stacks.join(', ')}; modes ${modes.join(', ')}; seeds ${seeds.join(', ')}; ${events} events a run`,
);
if (resultsPath)
  log(
    `results: ${relative(root, resultsPath)}; ${planned.length - todo.length} of ${planned.length} runs already there, ${todo.length} to go${budgetMinutes === undefined ? '' : `; budget ${budgetMinutes} min`}`,
  );

const writeReport = () => {
  if (!reportPath || !resultsPath) return;
  const existing = existsSync(reportPath)
    ? readFileSync(reportPath, 'utf8')
    : '# Reliability under faults\n';
  const results = readResults(resultsPath);
  writeFileSync(reportPath, withSweepSection(existing, results, relative(root, resultsPath)));
  log(`wrote ${relative(root, reportPath)} (${results.length} results)`);
};

const summaries: Summary[] = [];
let outOfBudget = false;
{
  // In a block: disposed before process.exit below.
  await using postgres = values.pg === 'own' ? await startPostgres() : undefined;
  for (const stack of stacks) {
    const runs = todo.filter((t) => t.run === stack);
    // A stack with nothing left to run does not start its broker.
    if (runs.length === 0) continue;
    if (!withinBudget(startedAt, budgetMinutes, Date.now())) {
      outOfBudget = true;
      break;
    }
    log(`\n== ${stack}: starting the harness's own broker`);
    const brokerStart = Date.now();
    await using broker = await startBroker(stack);
    log(`   started in ${((Date.now() - brokerStart) / 1000).toFixed(1)} s`);
    for (const [i, { mode, seed }] of runs.entries()) {
      if (!withinBudget(startedAt, budgetMinutes, Date.now())) {
        outOfBudget = true;
        break;
      }
      log(`\n-- ${stack}/${mode} seed ${seed} (${i + 1} of ${runs.length} on ${stack})`);
      const pg = stack === 'embedded' ? undefined : postgres;
      const summary = await runOnce({ stack, mode, seed, events, broker, log, postgres: pg });
      for (const line of formatSummary(summary)) log(line);
      summaries.push(summary);
      if (resultsPath) {
        const date = new Date().toISOString();
        appendResult(resultsPath, toResult(summary, { date, commit, load: loadavg()[0] ?? 0 }));
        writeReport();
      }
    }
    if (outOfBudget) break;
  }
}
const failed = summaries.filter((s) => s.failed);
log(`\n${summaries.length - failed.length} passed, ${failed.length} failed`);
if (todo.length > summaries.length)
  log(
    `${todo.length - summaries.length} runs left${outOfBudget ? ` (budget of ${budgetMinutes} min spent)` : ''}: run the same command again to go on`,
  );
process.exit(failed.length > 0 ? 1 : 0);
