import { appendFileSync } from 'node:fs';

/** One measured cost as the work grows, beside the same measure at the small size. */
export interface CostRow {
  /** What was measured and where, e.g. `claim p99, 10M rows vs empty`. */
  readonly name: string;
  readonly value: number;
  /** `ms`, `s`, `B`, …: printed after the figures. */
  readonly unit: string;
  /** The same measure at the baseline (an empty store, no purge running); absent when none. */
  readonly baseline?: number | undefined;
  /** The highest value/baseline aimed at (e.g. 1.5); printed beside the measured one, never enforced. */
  readonly aim?: number | undefined;
}

const figure = (n: number, unit: string) =>
  `${n >= 100 ? Math.round(n).toLocaleString('en') : n.toFixed(2)} ${unit}`;

/**
 * Prints a table of costs with their ratio to the baseline. Benchmarks never fail on a time: this
 * only prints. When `ONCEFLOW_BENCH_ROWS` names a file, each row is also appended to it as one
 * JSON line with `kind: 'cost'` (`pnpm bench` at the root collects them into docs/benchmarks.md).
 */
export function printCosts(title: string, rows: readonly CostRow[]): void {
  console.log(`\n${title}`);
  console.log(
    `${'measure'.padEnd(44)} ${'value'.padStart(12)} ${'baseline'.padStart(12)} ratio   aim`,
  );
  const out = process.env.ONCEFLOW_BENCH_ROWS;
  for (const { name, value, unit, baseline, aim } of rows) {
    const ratio = baseline === undefined ? undefined : value / baseline;
    const verdict =
      ratio === undefined || aim === undefined
        ? ''
        : `<= ${aim.toFixed(2)}x ${ratio <= aim ? 'met' : 'NOT met'}`;
    console.log(
      `${name.padEnd(44)} ${figure(value, unit).padStart(12)} ${(baseline === undefined ? '' : figure(baseline, unit)).padStart(12)} ${(ratio === undefined ? '' : `${ratio.toFixed(2)}x`).padStart(6)}  ${verdict}`,
    );
    if (out) {
      const row = { kind: 'cost', title, name, value, unit, baseline, ratio, aim };
      appendFileSync(out, `${JSON.stringify(row)}\n`);
    }
  }
}
