import type { Summary } from './checker.js';

/** The results table of a sweep, as docs/reliability.md holds it. */
export function reliabilityTable(summaries: readonly Summary[]): string {
  const head =
    '| stack | handler | seed | events | accepted | processed | lost | doubled | unexpected | redelivery | p50 ms | p99 ms | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  const rows = summaries.map(
    (s) =>
      `| ${s.stack} | ${s.mode} | ${s.seed} | ${s.events} | ${s.accepted} | ${s.processed} | ${s.lost} | ${s.doubled} | ${s.unexpected} | ${(s.redeliveryRate * 100).toFixed(1)}% | ${s.p50Ms} | ${s.p99Ms} | ${s.failed ? 'FAILED' : 'ok'} |`,
  );
  return [head, ...rows].join('\n');
}

const LEGEND = `Each run: a receiver and two workers as child processes, a Stripe-signing sender that
duplicates, reorders, retries and replays, and the faults of the run's seed (workers and
receivers SIGKILLed at each step, a worker SIGSTOPped past its lock, the harness's own broker
restarted at a third and a half of the events accepted); see packages/chaos/README.md.

- **helper**: the effect and the processed mark in one transaction; doubled must be 0.
- **plain**: the effect written on its own; its doubles are expected (at-least-once processing),
  and are what the same-transaction helper removes.

lost = accepted with no ledger row; doubled = ids with more than one ledger row (the ledger has
no unique constraint); unexpected = rows for ids never accepted; redelivery = handler starts
beyond the first per processed event; p50/p99 = first 2xx to first ledger row.`;

const SWEEP_HEADING = '## The full sweep';

/**
 * `doc` with its "The full sweep" section (up to the next `## ` heading) replaced by the sweep's
 * legend and table; the rest of the file (what else was run, the soak) is kept. A doc without the
 * section gets it at the end.
 */
export function withSweepSection(
  doc: string,
  summaries: readonly Summary[],
  command: string,
): string {
  const seeds = [...new Set(summaries.map((s) => s.seed))].join(', ');
  const day = new Date().toISOString().slice(0, 10);
  const section = `${SWEEP_HEADING}\n\nWritten by \`${command}\` on ${day}; seeds ${seeds}.\n\n${LEGEND}\n\n${reliabilityTable(summaries)}\n`;
  const start = doc.indexOf(`\n${SWEEP_HEADING}\n`);
  if (start === -1) return `${doc.trimEnd()}\n\n${section}`;
  const next = doc.indexOf('\n## ', start + 1);
  return `${doc.slice(0, start + 1)}${section}${next === -1 ? '' : `\n${doc.slice(next + 1)}`}`;
}
