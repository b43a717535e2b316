import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { Summary } from './checker.js';
import { type HandlerMode, STACKS } from './stack.js';

/** One run of a sweep, as named in the results file: what `--full` skips when it finds it. */
export interface RunKey {
  /** The summary's stack label (`bullmq+pg-restart` with `--pg own`). */
  readonly stack: string;
  readonly mode: HandlerMode;
  readonly seed: number;
  readonly events: number;
}

/** The checker's counts a results line keeps (the same fields as the run's summary). */
type KeptCounts = Pick<
  Summary,
  | 'accepted'
  | 'processed'
  | 'lost'
  | 'doubled'
  | 'extraRows'
  | 'unexpected'
  | 'forgedAccepted'
  | 'gaveUp'
  | 'outageMisanswers'
  | 'redeliveryRate'
  | 'p50Ms'
  | 'p99Ms'
  | 'failed'
  | 'durationMs'
  | 'phasesMs'
>;

/** One line of the results file: a finished run's checker counts and where and when it ran. */
export interface SweepResult extends RunKey, KeptCounts {
  /** Lost with the broker (`Summary.brokerLost`), and its defects, on runs where it broke. */
  readonly brokerLost?: number | undefined;
  readonly brokerDefects?: readonly string[] | undefined;
  /** The lost events' record states (`Summary.lostStates`), on runs that lost any. */
  readonly lostStates?: Readonly<Record<string, number>> | undefined;
  readonly faults: readonly string[];
  /** ISO time the run ended. */
  readonly date: string;
  /** The commit checked out when the run started (`git rev-parse HEAD`). */
  readonly commit: string;
  /** The one-minute load average when the run ended. */
  readonly load: number;
}

/** The full sweep: 20 seeds × 10 000 events × every stack × both handler modes. */
export const FULL_SWEEP = {
  stacks: STACKS as readonly string[],
  modes: ['helper', 'plain'] as readonly HandlerMode[],
  seeds: Array.from({ length: 20 }, (_, i) => 1000 + i * 7919) as readonly number[],
  events: 10_000,
};

export const runKey = (k: RunKey) => `${k.stack}/${k.mode}/${k.seed}/${k.events}`;

/** The results file's line for `summary`. */
export function toResult(
  summary: Summary,
  meta: { readonly date: string; readonly commit: string; readonly load: number },
): SweepResult {
  const s = summary;
  return {
    stack: s.stack,
    mode: s.mode,
    seed: s.seed,
    events: s.events,
    accepted: s.accepted,
    processed: s.processed,
    lost: s.lost,
    doubled: s.doubled,
    extraRows: s.extraRows,
    unexpected: s.unexpected,
    forgedAccepted: s.forgedAccepted,
    gaveUp: s.gaveUp,
    outageMisanswers: s.outageMisanswers,
    redeliveryRate: s.redeliveryRate,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    failed: s.failed,
    durationMs: s.durationMs,
    phasesMs: s.phasesMs,
    ...(s.brokerDefects.length > 0
      ? { brokerLost: s.brokerLost, brokerDefects: s.brokerDefects }
      : {}),
    ...(s.lost + s.brokerLost > 0 ? { lostStates: s.lostStates } : {}),
    faults: s.faults,
    ...meta,
  };
}

/**
 * The results in `text`, one JSON object a line. A line that is not JSON (cut short when the
 * process died while appending it) is passed to `onMalformed` and skipped, so its run is done
 * again.
 */
export function parseResults(
  text: string,
  onMalformed: (line: number, error: string) => void = () => {},
): SweepResult[] {
  const results: SweepResult[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      results.push(JSON.parse(line) as SweepResult);
    } catch (err) {
      onMalformed(i + 1, (err as Error).message);
    }
  });
  return results;
}

export const readResults = (
  path: string,
  onMalformed?: (line: number, error: string) => void,
): SweepResult[] => (existsSync(path) ? parseResults(readFileSync(path, 'utf8'), onMalformed) : []);

/** Appends one finished run to the results file at once (a run is never kept only in memory). */
export function appendResult(path: string, result: SweepResult): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  // After a line cut short, start on a new line rather than glue onto it.
  const sep = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
  appendFileSync(path, `${sep}${JSON.stringify(result)}\n`);
}

/** The runs of `planned` not yet in `done`, in the planned order. */
export function pendingRuns<K extends RunKey>(planned: readonly K[], done: readonly RunKey[]): K[] {
  const seen = new Set(done.map(runKey));
  return planned.filter((k) => !seen.has(runKey(k)));
}

/** Whether a run may start: the budget (minutes since `startedAt`) is not spent yet. */
export const withinBudget = (startedAt: number, budgetMinutes: number | undefined, now: number) =>
  budgetMinutes === undefined || now - startedAt < budgetMinutes * 60_000;
