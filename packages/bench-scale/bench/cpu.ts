/**
 * CPU readings the scaling bench samples while workers run: the whole machine (/proc/stat, busy
 * and iowait apart), one server process (/proc/<pid>/stat), and which processes are the brokers'.
 * Linux only; readings are 0 elsewhere. Coarse (10 ms ticks): compare over seconds.
 */
import { readFileSync, readdirSync } from 'node:fs';

import { TICK_MS } from '../../core/bench/process-cpu.js';

export { processCpuMs } from '../../core/bench/process-cpu.js';

/** Machine CPU time so far, ms summed over cores. */
export interface MachineCpu {
  readonly busyMs: number;
  readonly iowaitMs: number;
  readonly totalMs: number;
}

export function machineCpu(): MachineCpu {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal …
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number) as number[];
    const busy =
      (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    return {
      busyMs: busy * TICK_MS,
      iowaitMs: (iowait ?? 0) * TICK_MS,
      totalMs: (busy + (idle ?? 0) + (iowait ?? 0)) * TICK_MS,
    };
  } catch {
    return { busyMs: 0, iowaitMs: 0, totalMs: 0 };
  }
}

/** Pids of the processes whose command line contains `needle` (e.g. `beam.smp`, `kafka.Kafka`). */
export function pidsMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
