import { Agent, request as httpRequest } from 'node:http';
import type { LoadRequest } from '../../core/bench/load.js';

export interface PacedLoadOptions {
  /** Origin, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  /** Requests per second to offer, whatever the server's pace (open loop). */
  readonly rate: number;
  readonly durationMs: number;
  /** Most requests in flight; beyond it a scheduled request waits (and its wait counts). */
  readonly maxInFlight: number;
  readonly request: (i: number) => LoadRequest;
}

export interface PacedLoadResult {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly statuses: Readonly<Record<number, number>>;
  readonly errors: number;
}

/**
 * Rate-limited (open-loop) load: request i is due at `i / rate` seconds and its latency runs from
 * that due time, so a server that falls behind is charged for the queue it causes (no
 * coordinated omission). Bench code only; the closed-loop `runLoad` from core measures max rate.
 */
export async function runPacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const { hostname, port } = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxInFlight });
  const total = Math.floor((options.rate * options.durationMs) / 1000);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();

  const send = (i: number, dueAt: number): Promise<void> =>
    new Promise((resolve) => {
      const r = options.request(i);
      const req = httpRequest(
        {
          host: hostname,
          port,
          method: r.method ?? 'POST',
          path: r.path,
          headers: r.headers,
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - dueAt);
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(r.body);
    });

  for (let i = 0; i < total; i++) {
    const dueAt = started + (i * 1000) / options.rate;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    while (inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
    const p = send(i, dueAt).then(() => {
      inFlight.delete(p);
    });
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  agent.destroy();
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  return {
    requests: latencies.length,
    rps: (latencies.length / elapsed) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    statuses,
    errors,
  };
}
