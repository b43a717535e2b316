import { readFileSync } from 'node:fs';

/** Linux reports process and machine times in ticks of 1/USER_HZ s; USER_HZ is 100 on every mainstream arch. */
export const TICK_MS = 10;

/**
 * CPU time (user + system, ms) a process has used so far, read from `/proc/<pid>/stat`; 0 when
 * it cannot be read (not Linux, process gone). Coarse (10 ms ticks): compare over seconds.
 */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}
