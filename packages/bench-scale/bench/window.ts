/**
 * The measured stretch of a scaling run: from the moment 10 % of the events were handled to the
 * moment 90 % were, over all processes. Start-up (process spawn, group join, first fetch) and the
 * tail (the last process draining alone) stay outside it, so the rate is the steady one.
 */

/** A counter sampled over time (CPU ms so far, for instance). */
export interface Series {
  readonly t: readonly number[];
  readonly v: readonly number[];
}

export interface Window {
  readonly from: number;
  readonly to: number;
  /** Events handled inside the window. */
  readonly events: number;
  readonly perSecond: number;
}

/** The 10–90 % window of the handled times (epoch ms, any order); undefined when too few. */
export function steadyWindow(handledAt: readonly number[]): Window | undefined {
  const sorted = [...handledAt].sort((a, b) => a - b);
  const first = Math.floor(sorted.length * 0.1);
  const last = Math.ceil(sorted.length * 0.9) - 1;
  const from = sorted[first];
  const to = sorted[last];
  if (from === undefined || to === undefined || to <= from) return undefined;
  const events = last - first;
  return { from, to, events, perSecond: (events / (to - from)) * 1000 };
}

/** The counter's value at `t`, linearly interpolated between samples (clamped at the ends). */
export function valueAt(series: Series, t: number): number {
  const { t: ts, v } = series;
  if (ts.length === 0) return 0;
  if (t <= (ts[0] as number)) return v[0] as number;
  for (let i = 1; i < ts.length; i++) {
    const t1 = ts[i] as number;
    if (t <= t1) {
      const t0 = ts[i - 1] as number;
      const v0 = v[i - 1] as number;
      const v1 = v[i] as number;
      return t1 === t0 ? v1 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
    }
  }
  return v[v.length - 1] as number;
}

/** How much the counter grew inside the window. */
export const growth = (series: Series, w: Window): number =>
  valueAt(series, w.to) - valueAt(series, w.from);
