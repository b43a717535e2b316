import { encodeRequest, type LoadRequest, openRaw, type RawConnection } from './raw-http.js';

export type { LoadRequest } from './raw-http.js';

/**
 * A small HTTP/1.1 load generator for benchmarks: `connections` keep-alive sockets, one request in
 * flight on each, until `requests` were sent or `durationMs` passed, whichever comes first.
 * It writes raw requests and reads only the status line and framing of each answer, so it costs
 * the process far less than the server it measures (`fetch` would not). Bench code only: it
 * understands Content-Length and chunked answers, nothing fancier.
 *
 * @example
 * const r = await runLoad({ url: 'http://127.0.0.1:3000', connections: 32, requests: 50_000,
 *   durationMs: 3_000, request: (i) => ({ path: '/webhooks/stripe', headers, body: bodyOf(i) }) });
 * console.log(formatResult('receiver', r));
 */

export interface LoadOptions {
  /** Origin of the server, e.g. `http://127.0.0.1:3000` (plain HTTP only). */
  readonly url: string;
  readonly connections: number;
  /** Upper bound on requests sent. */
  readonly requests: number;
  /** Upper bound on run time; no new request starts after it. */
  readonly durationMs: number;
  /** The i-th request (0-based). Called just before it is sent, outside the latency measurement. */
  readonly request: (i: number) => LoadRequest;
}

export interface LoadResult {
  readonly requests: number;
  readonly durationMs: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Answers by HTTP status. */
  readonly statuses: Readonly<Record<number, number>>;
  /** Socket errors (each one also ends that connection's loop). */
  readonly errors: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(options.url);
  const host = `${hostname}:${port}`;
  const latencies = new Float64Array(options.requests);
  const statuses: Record<number, number> = {};
  let sent = 0;
  let done = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;

  const loop = async () => {
    let conn: RawConnection | undefined;
    while (sent < options.requests && performance.now() < deadline) {
      const i = sent++;
      const bytes = encodeRequest(host, options.request(i));
      try {
        conn ??= await openRaw(hostname, Number(port));
        const t0 = performance.now();
        const res = await conn.exchange(bytes);
        latencies[done++] = performance.now() - t0;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.close) {
          conn.close();
          conn = undefined;
        }
      } catch {
        errors++;
        conn?.close();
        return;
      }
    }
    conn?.close();
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  return summariseLoad(latencies.subarray(0, done), performance.now() - started, statuses, errors);
}

/** Throughput and p50/p99 from the latencies (ms) of the requests answered in `durationMs`. */
export function summariseLoad(
  latencies: Float64Array | number[],
  durationMs: number,
  statuses: Readonly<Record<number, number>>,
  errors: number,
): LoadResult {
  const n = latencies.length;
  const sorted = Float64Array.from(latencies).sort();
  const at = (q: number) => sorted[Math.min(n - 1, Math.floor(q * n))] ?? Number.NaN;
  return {
    requests: n,
    durationMs,
    rps: (n / durationMs) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    statuses,
    errors,
  };
}

/** One line: `name  12,345 req/s  p50 1.23 ms  p99 4.56 ms  (202×37000)`. */
export function formatResult(name: string, r: LoadResult): string {
  const codes = Object.entries(r.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  const rps = Math.round(r.rps).toLocaleString('en-US');
  return `${name.padEnd(34)} ${rps.padStart(8)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${codes}${r.errors ? `, ${r.errors} errors` : ''})`;
}
