import { connect, type Socket } from 'node:net';

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
export interface LoadRequest {
  readonly method?: string | undefined;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body?: string | Uint8Array | undefined;
}

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
    let conn: Connection | undefined;
    while (sent < options.requests && performance.now() < deadline) {
      const i = sent++;
      const bytes = encode(host, options.request(i));
      try {
        conn ??= await open(hostname, Number(port));
        const t0 = performance.now();
        const res = await conn.exchange(bytes);
        latencies[done++] = performance.now() - t0;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.close) {
          conn.socket.destroy();
          conn = undefined;
        }
      } catch {
        errors++;
        conn?.socket.destroy();
        return;
      }
    }
    conn?.socket.end();
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const durationMs = performance.now() - started;
  const sorted = latencies.subarray(0, done).sort();
  const at = (q: number) => sorted[Math.min(done - 1, Math.floor(q * done))] ?? Number.NaN;
  return {
    requests: done,
    durationMs,
    rps: (done / durationMs) * 1000,
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

function encode(host: string, req: LoadRequest): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  let head = `${req.method ?? 'POST'} ${req.path} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${body.length}\r\n`;
  for (const [k, v] of Object.entries(req.headers ?? {})) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
}

interface Connection {
  readonly socket: Socket;
  exchange(bytes: Buffer): Promise<{ status: number; close: boolean }>;
}

function open(host: string, port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    let buffered: Buffer = Buffer.alloc(0);
    let waiter:
      | { resolve: (r: { status: number; close: boolean }) => void; reject: (e: Error) => void }
      | undefined;
    const fail = (err: Error) => {
      waiter?.reject(err);
      waiter = undefined;
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const parsed = parseResponse(buffered);
      if (!parsed || !waiter) return;
      buffered = buffered.subarray(parsed.length);
      const w = waiter;
      waiter = undefined;
      w.resolve({ status: parsed.status, close: parsed.close });
    });
    socket.on('error', (err) => {
      reject(err);
      fail(err);
    });
    socket.on('close', () => fail(new Error('connection closed')));
    socket.on('connect', () =>
      resolve({
        socket,
        exchange: (bytes) =>
          new Promise((res, rej) => {
            waiter = { resolve: res, reject: rej };
            socket.write(bytes);
          }),
      }),
    );
  });
}

/** One complete response at the start of `buf`, or undefined when more bytes are needed. */
function parseResponse(
  buf: Buffer,
): { status: number; close: boolean; length: number } | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/.test(head);
  const bodyStart = headEnd + 4;
  const cl = /\r\ncontent-length: *(\d+)/.exec(head);
  if (cl) {
    const length = bodyStart + Number(cl[1]);
    return buf.length >= length ? { status, close, length } : undefined;
  }
  if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    const end = buf.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
    return end === -1 ? undefined : { status, close, length: end + 7 };
  }
  return { status, close, length: bodyStart };
}
