/**
 * The soak's samples and its verdict: pure functions over what `soak.ts` measured, so the slope
 * and the thresholds are tested without running a soak.
 */
import type { MemoryReport } from './memory-report.js';

/** One sample of a soak, taken every `sampleMs`. */
export interface SoakSample {
  /** ms since the load started. */
  readonly atMs: number;
  /** Events answered 2xx so far. */
  readonly accepted: number;
  /** Events due by the rate that the sender has not sent yet (it keeps a bounded number open). */
  readonly behind: number;
  /** Accepted events with a ledger row so far. */
  readonly processed: number;
  /** Time from the 2xx to the ledger row of the events processed since the previous sample (ms). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The broker's ready + in-flight + delayed messages (`BacklogProbe`), where the transport has one. */
  readonly backlog?: number | undefined;
  /** One-minute load average of the machine. */
  readonly load1: number;
  /** Each child's report by name (`receiver`, `worker-1`, `worker-2`); missing if it did not answer. */
  readonly memory: Readonly<Record<string, MemoryReport | undefined>>;
}

/** The thresholds a soak's verdict uses. */
export interface SoakThresholds {
  /** Highest RSS slope over the second half, per process (KB/min). */
  readonly rssKbPerMin: number;
  /** Highest slope of the heap after a full collection over the second half, per process (KB/min). */
  readonly heapKbPerMin: number;
  /** Highest growth of the lag (accepted − processed) and of the backlog over the second half (events/min). */
  readonly lagPerMin: number;
}

/** 1 MB/min of RSS (10 MB over a 10-minute soak); 128 KB/min of live heap; lag: 1 % of the rate. */
export const defaultThresholds = (ratePerSec: number): SoakThresholds => ({
  rssKbPerMin: 1024,
  heapKbPerMin: 128,
  lagPerMin: Math.max(1, ratePerSec * 0.6),
});

/** Least-squares slope of `y` over `x`; 0 with fewer than two distinct x. */
export function slope(points: readonly { readonly x: number; readonly y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Theil–Sen slope: the median of the slopes between every pair of points. A lag that is near 0
 * with a few spikes (a slow sample on a busy machine) has slope 0; a lag that keeps growing does
 * not. 0 with fewer than two distinct x.
 */
export function medianSlope(points: readonly { readonly x: number; readonly y: number }[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++)
    for (let j = i + 1; j < points.length; j++) {
      const a = points[i] as { x: number; y: number };
      const b = points[j] as { x: number; y: number };
      if (b.x !== a.x) slopes.push((b.y - a.y) / (b.x - a.x));
    }
  if (slopes.length === 0) return 0;
  slopes.sort((p, q) => p - q);
  const mid = slopes.length >> 1;
  return slopes.length % 2 ? (slopes[mid] ?? 0) : ((slopes[mid - 1] ?? 0) + (slopes[mid] ?? 0)) / 2;
}

/** The samples taken in the second half of the load (the first half is warm-up). */
export function secondHalf(samples: readonly SoakSample[]): SoakSample[] {
  const last = samples.at(-1);
  if (!last) return [];
  return samples.filter((s) => s.atMs >= last.atMs / 2);
}

const MINUTE = 60_000;

/** Slope per minute of `pick` over the samples where it is defined (least squares, or `fit`). */
function perMinute(
  samples: readonly SoakSample[],
  pick: (s: SoakSample) => number | undefined,
  fit: typeof slope = slope,
) {
  const points: { x: number; y: number }[] = [];
  for (const s of samples) {
    const y = pick(s);
    if (y !== undefined) points.push({ x: s.atMs / MINUTE, y });
  }
  return points.length >= 2 ? fit(points) : undefined;
}

export interface ProcessVerdict {
  readonly name: string;
  /** RSS at the first and the last sample (bytes). */
  readonly startRss: number;
  readonly endRss: number;
  readonly startHeap: number;
  readonly endHeap: number;
  /** Second-half Theil–Sen slopes (KB/min). */
  readonly rssKbPerMin: number;
  readonly heapKbPerMin: number;
  readonly flat: boolean;
}

export interface SoakVerdict {
  readonly processes: readonly ProcessVerdict[];
  /** Second-half Theil–Sen slope of accepted − processed + behind (events/min). */
  readonly lagPerMin: number;
  /** Second-half Theil–Sen slope of the broker's backlog (events/min), where there is a probe. */
  readonly backlogPerMin?: number | undefined;
  readonly memoryFlat: boolean;
  readonly lagFlat: boolean;
  readonly thresholds: SoakThresholds;
}

export function soakVerdict(
  samples: readonly SoakSample[],
  thresholds: SoakThresholds,
): SoakVerdict {
  const half = secondHalf(samples);
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.memory)))];
  const processes = names.map((name): ProcessVerdict => {
    const reports = samples.map((s) => s.memory[name]).filter((m) => m !== undefined);
    const first = reports[0];
    const last = reports.at(-1);
    const rss = (perMinute(half, (s) => s.memory[name]?.rss, medianSlope) ?? 0) / 1024;
    const heap = (perMinute(half, (s) => s.memory[name]?.heapAfterGc, medianSlope) ?? 0) / 1024;
    return {
      name,
      startRss: first?.rss ?? 0,
      endRss: last?.rss ?? 0,
      startHeap: first?.heapAfterGc ?? 0,
      endHeap: last?.heapAfterGc ?? 0,
      rssKbPerMin: rss,
      heapKbPerMin: heap,
      // A process that stopped answering is not flat: it is gone or stuck.
      flat:
        reports.length === samples.length &&
        rss < thresholds.rssKbPerMin &&
        heap < thresholds.heapKbPerMin,
    };
  });
  // Lag: accepted but not processed, plus due but not yet sent (a receiver that cannot keep up).
  // Median slopes: the lag of a busy machine has spikes, and memory steps up once while a
  // backlog is worked off, which a least-squares line over the half follows; a leak does not stop.
  const lagPerMin = perMinute(half, (s) => s.accepted - s.processed + s.behind, medianSlope) ?? 0;
  const backlogPerMin = perMinute(half, (s) => s.backlog, medianSlope);
  return {
    processes,
    lagPerMin,
    backlogPerMin,
    memoryFlat: processes.length > 0 && processes.every((p) => p.flat),
    lagFlat:
      lagPerMin < thresholds.lagPerMin &&
      (backlogPerMin === undefined || backlogPerMin < thresholds.lagPerMin),
    thresholds,
  };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const pad = (cells: readonly string[], widths: readonly number[]) =>
  cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');

/** The per-sample table: time, accepted, lag, window p50/p99, backlog, load, RSS / heap per process. */
export function formatSamples(samples: readonly SoakSample[]): string[] {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.memory)))];
  const head = [
    't s',
    'accepted',
    'behind',
    'lag',
    'p50 ms',
    'p99 ms',
    'backlog',
    'load',
    ...names.map((n) => `${n} rss/heap MB`),
  ];
  const widths = head.map((h) => Math.max(h.length, 8));
  const rows = samples.map((s) =>
    pad(
      [
        (s.atMs / 1000).toFixed(0),
        String(s.accepted),
        String(s.behind),
        String(s.accepted - s.processed),
        String(Math.round(s.p50Ms)),
        String(Math.round(s.p99Ms)),
        s.backlog === undefined ? '-' : String(s.backlog),
        s.load1.toFixed(2),
        ...names.map((n) => {
          const m = s.memory[n];
          return m ? `${mb(m.rss)}/${mb(m.heapAfterGc)}` : 'gone';
        }),
      ],
      widths,
    ),
  );
  return [pad(head, widths), ...rows];
}

/** The verdict in words: each process's RSS and heap, start → end and slope, then the lag. */
export function formatVerdict(v: SoakVerdict): string[] {
  const t = v.thresholds;
  return [
    ...v.processes.map(
      (p) =>
        `${p.name}: rss ${mb(p.startRss)} → ${mb(p.endRss)} MB (${p.rssKbPerMin.toFixed(0)} KB/min), ` +
        `heap after gc ${mb(p.startHeap)} → ${mb(p.endHeap)} MB (${p.heapKbPerMin.toFixed(0)} KB/min): ${p.flat ? 'flat' : 'GROWING'}`,
    ),
    `lag ${v.lagPerMin.toFixed(1)} events/min` +
      (v.backlogPerMin === undefined ? '' : `, backlog ${v.backlogPerMin.toFixed(1)} events/min`) +
      ` over the second half: ${v.lagFlat ? 'flat' : 'GROWING'}`,
    `memory ${v.memoryFlat ? 'flat' : 'NOT FLAT'} (second-half slope below ${t.rssKbPerMin} KB/min RSS and ` +
      `${t.heapKbPerMin} KB/min heap after gc, per process); lag ${v.lagFlat ? 'flat' : 'NOT FLAT'} ` +
      `(below ${t.lagPerMin.toFixed(0)} events/min)`,
  ];
}
