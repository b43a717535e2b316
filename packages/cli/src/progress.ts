import { humanDuration } from './format.js';
import { type Output, toneErr } from './output.js';

export interface ProgressOptions {
  /** `redrive`, `purge`, `replay`: starts each line. */
  readonly verb: string;
  readonly output: Output;
  /** One JSON object per line (NDJSON) instead of text: what `--json` prints on stderr. */
  readonly json?: boolean | undefined;
  /** Least time between two lines, in ms. Default 1000, so a short run prints none. */
  readonly intervalMs?: number | undefined;
  readonly now?: (() => number) | undefined;
}

/** Reports progress; `done` ends a run that printed lines with a last one. */
export interface Progress {
  update(done: number, total: number): void;
  done(done: number, total: number): void;
}

/**
 * Progress lines on `err` for long runs: `redrive: 1200/5000 (24%), 240/s, ETA 16s`, or with
 * `json` one NDJSON object a line (`{"progress":"redrive","done":1200,"total":5000,
 * "ratePerSecond":240,"etaMs":15833}`), at most one per `intervalMs`, the first after
 * `intervalMs` has passed (a run shorter than that prints none). The rate is the average since
 * the start; the ETA assumes it holds (`null` in JSON before anything is done).
 *
 * @example
 * const progress = createProgress({ verb: 'redrive', output });
 * await redriveDeadLetters(stores, { ...options, onProgress: progress.update });
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const interval = options.intervalMs ?? 1000;
  const start = now();
  let last = start;
  let printed: number | undefined;
  const line = (done: number, total: number) => {
    const elapsed = Math.max(1, now() - start);
    const rate = (done * 1000) / elapsed;
    const pct = total === 0 ? 100 : Math.floor((done * 100) / total);
    const etaMs = rate > 0 ? Math.round(((total - done) / rate) * 1000) : null;
    const shown = rate >= 10 ? Math.round(rate) : Math.round(rate * 10) / 10;
    printed = done;
    if (options.json) {
      const body = { progress: options.verb, done, total, ratePerSecond: shown, etaMs };
      options.output.err(JSON.stringify(body));
      return;
    }
    const eta = etaMs === null ? '?' : humanDuration(etaMs);
    const head = toneErr(options.output, 'dim', `${options.verb}:`);
    options.output.err(`${head} ${done}/${total} (${pct}%), ${shown}/s, ETA ${eta}`);
  };
  return {
    update(done, total) {
      const t = now();
      if (t - last < interval) return;
      last = t;
      line(done, total);
    },
    done(done, total) {
      // Only a run that printed gets a last line, and only when it adds something.
      if (printed !== undefined && printed !== done) line(done, total);
    },
  };
}
