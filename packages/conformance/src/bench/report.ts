import { appendFileSync } from 'node:fs';
import type { Measured } from './measure.js';

/** One line of a comparison: our path beside the raw client doing the same work. */
export interface Comparison {
  readonly name: string;
  readonly ours: Measured;
  readonly raw: Measured;
  /** The ratio ours/raw aimed at (e.g. 0.95); printed beside the measured one, never enforced. */
  readonly aim: number;
}

/**
 * Prints a comparison table with ratios. Benchmarks never fail on a time: this only prints.
 * When `ONCEFLOW_BENCH_ROWS` names a file, each row is also appended to it as one JSON line
 * (`pnpm bench` at the root collects them into docs/benchmarks.md).
 */
export function printComparisons(title: string, rows: readonly Comparison[]): void {
  const rate = (m: Measured) => `${Math.round(m.perSecond).toLocaleString('en')}/s`;
  console.log(`\n${title}`);
  console.log(
    `${'path'.padEnd(34)} ${'onceflow'.padStart(12)} ${'raw client'.padStart(12)} ${'ratio'.padStart(7)}  aim`,
  );
  const out = process.env.ONCEFLOW_BENCH_ROWS;
  for (const { name, ours, raw, aim } of rows) {
    const ratio = ours.perSecond / raw.perSecond;
    console.log(
      `${name.padEnd(34)} ${rate(ours).padStart(12)} ${rate(raw).padStart(12)} ${`${ratio.toFixed(2)}x`.padStart(7)}  >= ${aim.toFixed(2)}x ${ratio >= aim ? 'met' : 'NOT met'}`,
    );
    if (out) {
      const row = { title, name, ours: ours.perSecond, raw: raw.perSecond, ratio, aim };
      appendFileSync(out, `${JSON.stringify(row)}\n`);
    }
  }
}

/**
 * Prints each run's cost per operation: this process's CPU and JS-heap allocation (from
 * `measure`), and each beside the first run's as a ratio. Runs without a cost are left out.
 */
export function printCosts(title: string, runs: readonly Measured[]): void {
  const costed = runs.filter((m) => m.cpuMicros !== undefined && m.allocatedBytes !== undefined);
  const base = costed[0];
  if (!base) return;
  const cpu = (m: Measured) => (m.cpuMicros ?? 0) / m.count;
  const bytes = (m: Measured) => (m.allocatedBytes ?? 0) / m.count;
  console.log(`\n${title}`);
  console.log(
    `${'run'.padEnd(46)} ${'CPU/op'.padStart(9)} ${'ratio'.padStart(6)} ${'alloc/op'.padStart(9)} ${'ratio'.padStart(6)}`,
  );
  for (const m of costed)
    console.log(
      `${m.label.padEnd(46)} ${`${cpu(m).toFixed(1)} µs`.padStart(9)} ${`${(cpu(m) / cpu(base)).toFixed(2)}x`.padStart(6)} ${`${(bytes(m) / 1024).toFixed(1)} KB`.padStart(9)} ${`${(bytes(m) / bytes(base)).toFixed(2)}x`.padStart(6)}`,
    );
}
