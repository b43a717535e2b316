/**
 * `pnpm chaos --soak [--minutes 10] [--rate 50] [--sample-seconds 15] [--stacks embedded,rabbitmq]
 * [--json samples.json]`
 *
 * Steady load on each stack in turn (no faults), a table of samples and a verdict per stack.
 * Returns the exit code: 1 when memory or lag grew, or an event was lost or doubled.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBroker } from './brokers.js';
import { runSoak, type SoakResult } from './soak.js';
import { formatSamples, formatVerdict } from './soak-sampler.js';
import { STACKS, type StackName } from './stack.js';

const mb = (bytes: number) => (bytes / 1048576).toFixed(0);

/** One markdown row per stack, for docs/reliability.md. */
export function soakRow(r: SoakResult): string {
  const v = r.verdict;
  const half = r.samples.filter((s) => s.atMs >= (r.samples.at(-1)?.atMs ?? 0) / 2);
  const p50 = Math.max(...half.map((s) => s.p50Ms));
  const p99 = Math.max(...half.map((s) => s.p99Ms));
  const lags = r.samples.map((s) => s.accepted - s.processed);
  const behind = Math.max(...r.samples.map((s) => s.behind));
  const backlogs = r.samples.map((s) => s.backlog).filter((b) => b !== undefined);
  const loads = r.samples.map((s) => s.load1);
  const procs = v.processes
    .map(
      (p) =>
        `${p.name} ${mb(p.startRss)}→${mb(p.endRss)} (${p.rssKbPerMin.toFixed(0)}; heap ${mb(p.startHeap)}→${mb(p.endHeap)}, ${p.heapKbPerMin.toFixed(0)})`,
    )
    .join('<br>');
  return `| ${r.stack} | ${r.accepted} | ${procs} | ${Math.max(...lags)} / ${lags.at(-1)} (${v.lagPerMin.toFixed(1)}/min) | ${behind} | ${p50} / ${p99} | ${
    backlogs.length ? `${Math.max(...backlogs)} (${(v.backlogPerMin ?? 0).toFixed(1)}/min)` : '-'
  } | ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} | ${r.lost} / ${r.doubled} | ${r.ok ? 'flat' : 'NOT FLAT'} |`;
}

export async function soakMain(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      soak: { type: 'boolean' },
      stacks: { type: 'string' },
      minutes: { type: 'string', default: '10' },
      rate: { type: 'string', default: '50' },
      'sample-seconds': { type: 'string', default: '15' },
      json: { type: 'string' },
    },
  });
  const stacks = (values.stacks ?? 'embedded')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as StackName[];
  for (const s of stacks)
    if (!STACKS.includes(s)) throw new Error(`unknown stack ${s}: ${STACKS.join(', ')}`);
  const minutes = Number(values.minutes);
  const rate = Number(values.rate);
  const sampleMs = Number(values['sample-seconds']) * 1000;
  const log = (line: string) => console.log(line);
  log(`onceflow soak: stacks ${stacks.join(', ')}; ${minutes} min at ${rate} events/s each`);
  const results: SoakResult[] = [];
  for (const stack of stacks) {
    log(`\n== ${stack}: starting the harness's own broker`);
    await using broker = await startBroker(stack);
    log(`-- ${stack}: ${minutes} min at ${rate} events/s, a sample every ${sampleMs / 1000} s`);
    const r = await runSoak({ stack, broker, minutes, rate, sampleMs, log });
    log(`\n${stack}: samples`);
    for (const line of formatSamples(r.samples)) log(`  ${line}`);
    log(`${stack}: verdict`);
    for (const line of formatVerdict(r.verdict)) log(`  ${line}`);
    log(
      `  accepted ${r.accepted}, lost ${r.lost}, doubled ${r.doubled}, retried ${r.retried} ` +
        `(answers ${JSON.stringify(r.statuses)})` +
        (r.ended.length ? `, ${r.ended.join(', ')}` : '') +
        `: ${r.ok ? 'ok' : 'FAILED'}`,
    );
    results.push(r);
    // Every sample, for a later look (pnpm runs this in the package's folder).
    if (values.json)
      writeFileSync(
        resolve(process.env.INIT_CWD ?? process.cwd(), values.json),
        JSON.stringify(results, null, 1),
      );
  }
  log(
    '\n| stack | accepted | RSS MB start→end (KB/min, 2nd half); heap after gc MB (KB/min) | lag max / end (slope) | sender behind max | p50 / p99 ms (worst 2nd-half window) | backlog max (slope) | load 1 min | lost / doubled | verdict |',
  );
  log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) log(soakRow(r));
  return results.every((r) => r.ok) ? 0 : 1;
}
