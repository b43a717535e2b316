import { FULL_SWEEP, runKey, type SweepResult } from './sweep.js';

const LEGEND = `Each run: a receiver and two workers as child processes, a Stripe-signing sender that
duplicates, reorders, retries and replays, and the faults of the run's seed (workers and
receivers SIGKILLed at each step, a worker SIGSTOPped past its lock, the harness's own broker
restarted at a third and a half of the events accepted); see packages/chaos/README.md.

- **helper**: the effect and the processed mark in one transaction; doubled must be 0.
- **plain**: the effect written on its own; its doubles are expected (at-least-once processing),
  and are what the same-transaction helper removes.

Per stack and handler, over the runs done: accepted, processed, lost and doubled are sums;
lost = accepted with no ledger row; doubled = ids with more than one ledger row (the ledger has
no unique constraint); redelivery = handler starts beyond the first per processed event, over
all the runs' processed events; p50 = the median of the runs' p50, p99 = the highest run's p99
(first 2xx to first ledger row, 0 when the worker wrote the row before the sender read its
answer, as it mostly does on RabbitMQ); minutes = the mean duration of a run; failed = runs with lost,
unexpected rows, forged deliveries accepted, events given up, or (helper) doubled above 0.
Events accepted after the harness's broker stopped keeping what it acknowledged (a defect read
from the broker's own log, listed under the table) are lost with the broker: they are listed
there and not counted in lost.`;

const SWEEP_HEADING = '## The full sweep';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.floor((s.length - 1) / 2)] ?? 0);
};

/**
 * The full sweep's table from every result of the results file: one row per stack and handler
 * of the full plan (those with no run yet included), then the line saying how much is done.
 */
export function sweepTable(results: readonly SweepResult[]): string {
  const { stacks, modes, seeds, events } = FULL_SWEEP;
  const planned = new Set(
    stacks.flatMap((stack) =>
      modes.flatMap((mode) => seeds.map((seed) => runKey({ stack, mode, seed, events }))),
    ),
  );
  // A tuple run twice (a line added by hand) counts once: its latest line.
  const latest = new Map<string, SweepResult>();
  for (const r of results) if (planned.has(runKey(r))) latest.set(runKey(r), r);
  const inPlan = [...latest.values()];
  const head =
    '| stack | handler | runs | seeds | accepted | processed | lost | doubled | redelivery | p50 ms | p99 ms | minutes | failed |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  const rows: string[] = [];
  for (const stack of stacks)
    for (const mode of modes) {
      const rs = inPlan
        .filter((r) => r.stack === stack && r.mode === mode)
        .sort((a, b) => seeds.indexOf(a.seed) - seeds.indexOf(b.seed));
      const sum = (f: (r: SweepResult) => number) => rs.reduce((n, r) => n + f(r), 0);
      const processed = sum((r) => r.processed);
      const redelivery =
        processed === 0 ? 0 : sum((r) => r.redeliveryRate * r.processed) / processed;
      const none = rs.length === 0;
      const cell = (v: string | number) => (none ? '–' : String(v));
      rows.push(
        `| ${stack} | ${mode} | ${rs.length} of ${seeds.length} | ${none ? '–' : rs.map((r) => r.seed).join(', ')} | ${cell(sum((r) => r.accepted))} | ${cell(processed)} | ${cell(sum((r) => r.lost))} | ${cell(sum((r) => r.doubled))} | ${cell(`${(redelivery * 100).toFixed(1)}%`)} | ${cell(median(rs.map((r) => r.p50Ms)))} | ${cell(Math.max(0, ...rs.map((r) => r.p99Ms)))} | ${cell((sum((r) => r.durationMs) / rs.length / 60_000).toFixed(1))} | ${cell(rs.filter((r) => r.failed).length)} |`,
      );
    }
  const total = planned.size;
  const done =
    inPlan.length === total
      ? `All ${total} runs of the full sweep are done.`
      : `**${inPlan.length} of ${total} runs done: the full sweep is not complete.**`;
  const failed = inPlan
    .filter((r) => r.failed)
    .map(
      (r) =>
        `- FAILED ${r.stack}/${r.mode} seed ${r.seed}: accepted ${r.accepted}, lost ${r.lost}, doubled ${r.doubled}, unexpected ${r.unexpected}, forged accepted ${r.forgedAccepted}, gave up ${r.gaveUp} (commit ${r.commit.slice(0, 7)}, ${r.date.slice(0, 10)})`,
    );
  const broken = inPlan
    .filter((r) => (r.brokerDefects?.length ?? 0) > 0)
    .map(
      (r) =>
        `- broker defect in ${r.stack}/${r.mode} seed ${r.seed}: ${r.brokerLost ?? 0} accepted events lost with the broker; ${(r.brokerDefects ?? []).join('; ')} (commit ${r.commit.slice(0, 7)}, ${r.date.slice(0, 10)})`,
    );
  const others = results.filter((r) => !planned.has(runKey(r))).length;
  const notes = [
    done,
    ...(others > 0
      ? [`${others} other runs in the results file (other sizes, seeds or stacks) are not counted.`]
      : []),
  ];
  return [
    head,
    ...rows,
    '',
    ...notes,
    ...(failed.length ? ['', ...failed] : []),
    ...(broken.length ? ['', ...broken] : []),
  ].join('\n');
}

/**
 * `doc` with its "The full sweep" section (up to the next `## ` heading) replaced by the sweep's
 * how-to, legend and table, built from every result of the results file; the rest of the file
 * (what else was run, the soak) is kept. A doc without the section gets it at the end.
 */
export function withSweepSection(
  doc: string,
  results: readonly SweepResult[],
  resultsFile: string,
): string {
  const { seeds, events } = FULL_SWEEP;
  const day = new Date().toISOString().slice(0, 10);
  const commits = [...new Set(results.map((r) => r.commit.slice(0, 7)))];
  const howTo = `\`\`\`sh
pnpm chaos --full                       # goes on where the results file stops
pnpm chaos --full --budget-minutes 120  # starts no run after 120 minutes; the one in progress ends
pnpm chaos --full --stacks embedded     # only these stacks' runs
\`\`\`

${seeds.length} seeds (1000 + 7919·i, i = 0…${seeds.length - 1}) × ${events.toLocaleString('en-US')} events × ${FULL_SWEEP.stacks.length} stacks × ${FULL_SWEEP.modes.length} handlers. Every finished run is
appended at once to \`${resultsFile}\` (one JSON line: the checker's counts, duration and
phases, faults, date, load average and commit); \`--full\` skips the runs already there, failed
ones included, and this section is rebuilt from the whole file after each run (last on ${day}${commits.length ? `; commits ${commits.join(', ')}` : ''}).
A run stopped halfway (the process killed) leaves no line and is run again; to run a finished
one again, delete its line.`;
  const section = `${SWEEP_HEADING}\n\n${howTo}\n\n${LEGEND}\n\n${sweepTable(results)}\n`;
  const start = doc.indexOf(`\n${SWEEP_HEADING}\n`);
  if (start === -1) return `${doc.trimEnd()}\n\n${section}`;
  const next = doc.indexOf('\n## ', start + 1);
  return `${doc.slice(0, start + 1)}${section}${next === -1 ? '' : `\n${doc.slice(next + 1)}`}`;
}
