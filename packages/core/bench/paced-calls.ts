import { type LoadResult, summariseLoad } from './load.js';

export interface PacedCallsOptions {
  /** Calls per second to offer, whatever the callee's pace (open loop). */
  readonly rate: number;
  /** Longest the run lasts; `signal` may end it sooner. */
  readonly durationMs: number;
  /** Most calls in flight; beyond it a due call waits, and its wait counts in its latency. */
  readonly maxInFlight: number;
  /** The i-th call (0-based). A rejection counts as an error, not a latency. */
  readonly call: (i: number) => Promise<unknown>;
  /** No call starts once it is aborted (e.g. when the work measured beside it is done). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Rate-limited (open-loop) calls of an async function, the in-process twin of the HTTP paced
 * load: call i is due at `i / rate` seconds and its latency runs from that due time, so a callee
 * that falls behind is charged for the queue it causes (no coordinated omission). Bench code only.
 *
 * @example
 * const r = await runPacedCalls({ rate: 500, durationMs: 5000, maxInFlight: 64,
 *   call: (i) => store.claim(envelopes[i], { leaseMs: 30_000 }) });
 * console.log(`p99 ${r.p99Ms.toFixed(2)} ms`);
 */
export async function runPacedCalls(options: PacedCallsOptions): Promise<LoadResult> {
  const total = Math.floor((options.rate * options.durationMs) / 1000);
  const latencies: number[] = [];
  let errors = 0;
  let inFlight = 0;
  const freed: (() => void)[] = [];
  const running = new Set<Promise<void>>();
  const started = performance.now();

  const send = async (i: number, dueAt: number): Promise<void> => {
    while (inFlight >= options.maxInFlight) await new Promise<void>((r) => freed.push(r));
    inFlight += 1;
    try {
      await options.call(i);
      latencies.push(performance.now() - dueAt);
    } catch {
      errors += 1;
    } finally {
      inFlight -= 1;
      freed.shift()?.();
    }
  };

  for (let i = 0; i < total && !options.signal?.aborted; i++) {
    const dueAt = started + (i * 1000) / options.rate;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const p = send(i, dueAt).then(() => {
      running.delete(p);
    });
    running.add(p);
  }
  await Promise.all(running);
  return summariseLoad(latencies, performance.now() - started, { 200: latencies.length }, errors);
}
