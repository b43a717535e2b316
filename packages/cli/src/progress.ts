import { humanDuration } from './format.js';
import type { Output } from './output.js';

export interface ProgressOptions {
  /** `redrive`, `purge`: starts each line. */
  readonly verb: string;
  readonly output: Output;
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
 * Progress lines on `err` for long runs: `redrive: 1200/5000 (24%), 240/s, ETA 16s`, at most one
 * per `intervalMs`, the first after `intervalMs` has passed (a run shorter than that prints none).
 * The rate is the average since the start; the ETA assumes it holds.
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
  let printed = false;
  const line = (done: number, total: number) => {
    const elapsed = Math.max(1, now() - start);
    const rate = (done * 1000) / elapsed;
    const pct = total === 0 ? 100 : Math.floor((done * 100) / total);
    const eta = rate > 0 ? humanDuration(((total - done) / rate) * 1000) : '?';
    const shown = rate >= 10 ? Math.round(rate) : Math.round(rate * 10) / 10;
    options.output.err(`${options.verb}: ${done}/${total} (${pct}%), ${shown}/s, ETA ${eta}`);
    printed = true;
  };
  return {
    update(done, total) {
      const t = now();
      if (t - last < interval) return;
      last = t;
      line(done, total);
    },
    done(done, total) {
      if (printed) line(done, total);
    },
  };
}
