import { expect, it } from 'vitest';
import type { MemoryReport } from '../src/memory-report.js';
import {
  defaultThresholds,
  secondHalf,
  type SoakSample,
  medianSlope,
  slope,
  soakVerdict,
} from '../src/soak-sampler.js';

const MB = 1024 * 1024;
const mem = (rss: number, heap = 20 * MB): MemoryReport => ({
  kind: 'memory',
  rss,
  heapUsed: heap,
  heapAfterGc: heap,
  external: 0,
});

/** A 10-minute soak sampled every 15 s; `at(minute)` gives each value. */
function soak(at: (minute: number) => Partial<SoakSample> & { rss?: number; heap?: number }) {
  const samples: SoakSample[] = [];
  for (let t = 15_000; t <= 600_000; t += 15_000) {
    const v = at(t / 60_000);
    samples.push({
      atMs: t,
      accepted: v.accepted ?? t / 20,
      behind: v.behind ?? 0,
      processed: v.processed ?? t / 20 - 40,
      p50Ms: 30,
      p99Ms: 200,
      backlog: v.backlog,
      load1: 1,
      memory: { receiver: mem(v.rss ?? 100 * MB, v.heap), 'worker-1': mem(90 * MB) },
    });
  }
  return samples;
}

it('slope is the least-squares slope, 0 without two distinct x', () => {
  expect(slope([])).toBe(0);
  expect(slope([{ x: 1, y: 5 }])).toBe(0);
  expect(
    slope([
      { x: 1, y: 5 },
      { x: 1, y: 9 },
    ]),
  ).toBe(0);
  expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 3 * x + 7 })))).toBeCloseTo(3);
  // Noise around a line leaves its slope.
  expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 2 * x + (x % 2 ? 1 : -1) })))).toBeCloseTo(2.4);
});

it('the median slope ignores a few spikes that pull the least-squares slope', () => {
  const spiky = Array.from({ length: 20 }, (_, x) => ({ x, y: x === 19 ? 300 : x % 5 ? 0 : 200 }));
  expect(slope(spiky)).toBeGreaterThan(1.5);
  expect(medianSlope(spiky)).toBe(0);
  expect(medianSlope([0, 1, 2, 3].map((x) => ({ x, y: 3 * x + 7 })))).toBeCloseTo(3);
  expect(medianSlope([{ x: 1, y: 5 }])).toBe(0);
});

it('the second half is the samples from half the last sample time on', () => {
  const half = secondHalf(soak(() => ({})));
  expect(half[0]?.atMs).toBe(300_000);
  expect(half.at(-1)?.atMs).toBe(600_000);
});

it('flat memory and lag give a flat verdict, warm-up growth in the first half included', () => {
  const v = soakVerdict(
    soak((m) => ({ rss: (m < 5 ? 60 + 8 * m : 100) * MB, backlog: 12 })),
    defaultThresholds(50),
  );
  expect(v.memoryFlat).toBe(true);
  expect(v.lagFlat).toBe(true);
  const receiver = v.processes.find((p) => p.name === 'receiver');
  expect(receiver?.startRss).toBe(62 * MB);
  expect(receiver?.endRss).toBe(100 * MB);
  expect(receiver?.rssKbPerMin).toBeCloseTo(0);
  expect(v.backlogPerMin).toBeCloseTo(0);
});

it('one step of RSS early in the second half (a backlog worked off), flat after, is flat', () => {
  const v = soakVerdict(
    soak((m) => ({ rss: (m < 5.5 ? 110 : m < 6.2 ? 110 + (m - 5.5) * 45 : 142) * MB })),
    defaultThresholds(25),
  );
  expect(v.memoryFlat).toBe(true);
});

it('RSS growing 2 MB/min in the second half is not flat', () => {
  const v = soakVerdict(
    soak((m) => ({ rss: (100 + 2 * m) * MB })),
    defaultThresholds(50),
  );
  expect(v.processes.find((p) => p.name === 'receiver')?.rssKbPerMin).toBeCloseTo(2048);
  expect(v.processes.find((p) => p.name === 'worker-1')?.flat).toBe(true);
  expect(v.memoryFlat).toBe(false);
});

it('a heap after gc growing 256 KB/min is not flat while RSS is', () => {
  const v = soakVerdict(
    soak((m) => ({ heap: 20 * MB + m * 256 * 1024 })),
    defaultThresholds(50),
  );
  expect(v.processes.find((p) => p.name === 'receiver')?.heapKbPerMin).toBeCloseTo(256);
  expect(v.memoryFlat).toBe(false);
});

it('a process that stops answering is not flat', () => {
  const samples = soak(() => ({}));
  const last = samples.pop() as SoakSample;
  samples.push({ ...last, memory: { ...last.memory, receiver: undefined } });
  expect(soakVerdict(samples, defaultThresholds(50)).memoryFlat).toBe(false);
});

it('a lag with spikes on a busy machine is flat', () => {
  const v = soakVerdict(
    soak((m) => ({ processed: (m * 60_000) / 20 - (Math.round(m * 4) % 5 === 0 ? 300 : 0) })),
    defaultThresholds(25),
  );
  expect(v.lagFlat).toBe(true);
});

it('lag or backlog growing faster than 1 % of the rate is not flat', () => {
  const lag = soakVerdict(
    soak((m) => ({ processed: (m * 60_000) / 20 - 40 * m })),
    defaultThresholds(50),
  );
  expect(lag.lagPerMin).toBeCloseTo(40);
  expect(lag.lagFlat).toBe(false);
  const backlog = soakVerdict(
    soak((m) => ({ backlog: 10 + 60 * m })),
    defaultThresholds(50),
  );
  expect(backlog.lagPerMin).toBeCloseTo(0);
  expect(backlog.backlogPerMin).toBeCloseTo(60);
  expect(backlog.lagFlat).toBe(false);
  const behind = soakVerdict(
    soak((m) => ({ behind: 50 * m })),
    defaultThresholds(50),
  );
  expect(behind.lagPerMin).toBeCloseTo(50);
  expect(behind.lagFlat).toBe(false);
});
