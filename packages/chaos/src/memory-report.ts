/**
 * A child process's answer to the harness's `{ kind: 'memory' }` message: its
 * `process.memoryUsage()` before and after a full garbage collection, so the soak can tell a
 * heap that grows from one that has not been collected yet.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What a child reports (bytes). */
export interface MemoryReport {
  readonly kind: 'memory';
  readonly rss: number;
  readonly heapUsed: number;
  /** `heapUsed` right after a forced full collection. */
  readonly heapAfterGc: number;
  readonly external: number;
}

/** Makes this process answer the harness's memory requests over its IPC channel. */
export function answerMemoryRequests(): void {
  // `global.gc` without `--expose-gc` on the command line: the flag is read when a context is made.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  process.on('message', (m: { kind?: string }) => {
    if (m.kind !== 'memory') return;
    const before = process.memoryUsage();
    gc();
    const after = process.memoryUsage();
    const report: MemoryReport = {
      kind: 'memory',
      rss: before.rss,
      heapUsed: before.heapUsed,
      heapAfterGc: after.heapUsed,
      external: after.external,
    };
    process.send?.(report);
  });
}
