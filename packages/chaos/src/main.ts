/**
 * `pnpm chaos [--full] [--stacks embedded,rabbitmq] [--modes helper,plain] [--seeds 1,2,3 | --seed-count N]
 * [--events N] [--pg own] [--report docs/reliability.md]`
 *
 * The bounded sample (default): 3 seeds × 300 events per stack, helper and plain handlers.
 * `--full`: 20 seeds × 10 000 events per stack, its table written to docs/reliability.md.
 * Exits 1 when any run lost an event, or doubled an effect with the same-transaction helper.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startBroker, startPostgres } from './brokers.js';
import { formatSummary, type Summary } from './checker.js';
import { withSweepSection } from './report.js';
import { runOnce } from './run.js';
import { type HandlerMode, STACKS, type StackName } from './stack.js';

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
const seedCount = Number(values['seed-count'] ?? (full ? 20 : 3));
const seeds = values.seeds
  ? list(values.seeds).map(Number)
  : Array.from({ length: seedCount }, (_, i) => 1000 + i * 7919);
const events = Number(values.events ?? (full ? 10_000 : 300));
// pnpm runs this in the package's folder: a given path is taken from where the command was typed.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const reportPath = values.report
  ? resolve(process.env.INIT_CWD ?? process.cwd(), values.report)
  : full
    ? resolve(root, 'docs/reliability.md')
    : undefined;

const log = (line: string) => console.log(line);
const command = `pnpm chaos ${process.argv.slice(2).join(' ')}`.trim();
log(
  `onceflow chaos: stacks ${stacks.join(', ')}; modes ${modes.join(', ')}; seeds ${seeds.join(', ')}; ${events} events a run`,
);
const summaries: Summary[] = [];
{
  // In a block: disposed before process.exit below.
  await using postgres = values.pg === 'own' ? await startPostgres() : undefined;
  for (const stack of stacks) {
    log(`\n== ${stack}: starting the harness's own broker`);
    await using broker = await startBroker(stack);
    for (const seed of seeds)
      for (const mode of modes) {
        log(`\n-- ${stack}/${mode}`);
        const pg = stack === 'embedded' ? undefined : postgres;
        const summary = await runOnce({ stack, mode, seed, events, broker, log, postgres: pg });
        for (const line of formatSummary(summary)) log(line);
        summaries.push(summary);
      }
  }
}
const failed = summaries.filter((s) => s.failed);
log(`\n${summaries.length - failed.length} passed, ${failed.length} failed`);
if (reportPath) {
  const existing = existsSync(reportPath)
    ? readFileSync(reportPath, 'utf8')
    : '# Reliability under faults\n';
  writeFileSync(reportPath, withSweepSection(existing, summaries, command));
  log(`wrote ${reportPath}`);
}
process.exit(failed.length > 0 ? 1 : 0);
