import { type LoadRequest, type LoadResult, summariseLoad } from '../../core/bench/load.js';
import { encodeRequest, openRaw, type RawConnection } from '../../core/bench/raw-http.js';

export interface PacedLoadOptions {
  /** Origin, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  /** Requests per second to offer, whatever the server's pace (open loop). */
  readonly rate: number;
  readonly durationMs: number;
  /** Most requests (and connections) in flight; beyond it a due request waits, and its wait counts. */
  readonly maxInFlight: number;
  readonly request: (i: number) => LoadRequest;
}

/**
 * Rate-limited (open-loop) load: request i is due at `i / rate` seconds and its latency runs from
 * that due time, so a server that falls behind is charged for the queue it causes (no
 * coordinated omission). Requests go out on raw keep-alive connections (opened as needed, up to
 * `maxInFlight`), so the generator stays cheap. Bench code only; core's closed-loop `runLoad`
 * measures max rate.
 */
export async function runPacedLoad(options: PacedLoadOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(options.url);
  const host = `${hostname}:${port}`;
  const total = Math.floor((options.rate * options.durationMs) / 1000);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let open = 0;
  const idle: RawConnection[] = [];
  const freed: (() => void)[] = [];
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();

  const connection = async (): Promise<RawConnection> => {
    for (;;) {
      const ready = idle.pop();
      if (ready) return ready;
      if (open < options.maxInFlight) {
        open += 1;
        return openRaw(hostname, Number(port)).catch((err: unknown) => {
          open -= 1;
          throw err;
        });
      }
      await new Promise<void>((r) => freed.push(r));
    }
  };
  const giveBack = (conn: RawConnection | undefined) => {
    if (conn) idle.push(conn);
    else open -= 1;
    freed.shift()?.();
  };

  const send = async (i: number, dueAt: number): Promise<void> => {
    const bytes = encodeRequest(host, options.request(i));
    let conn: RawConnection | undefined;
    try {
      conn = await connection();
      const res = await conn.exchange(bytes);
      latencies.push(performance.now() - dueAt);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.close) {
        conn.close();
        conn = undefined;
      }
    } catch {
      errors++;
      conn?.close();
      conn = undefined;
    }
    giveBack(conn);
  };

  for (let i = 0; i < total; i++) {
    const dueAt = started + (i * 1000) / options.rate;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const p = send(i, dueAt).then(() => {
      inFlight.delete(p);
    });
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  for (const conn of idle) conn.close();
  return summariseLoad(latencies, performance.now() - started, statuses, errors);
}
