/**
 * Receiver benchmark: the receiver against a bare node:http server and against a hand-written
 * server doing the same Stripe HMAC check. Each server runs alone in a child process; the load
 * generator (./load.ts) runs here. Rounds are interleaved (a, b, c, a, b, c, …) so that load from
 * elsewhere on the machine hits every server alike; each figure is the median round.
 * Prints req/s, p50, p99, server CPU per request and the ratios. Never fails on a time.
 *
 *   pnpm --filter @onceflow/core bench
 *   BENCH_ROUNDS=5 BENCH_ROUND_MS=2000 BENCH_CONNECTIONS=32 pnpm --filter @onceflow/core bench
 *   BENCH_SERVERS='receiver,receiver+metrics' pnpm --filter @onceflow/core bench   # some servers only
 */
import { type ChildProcess, fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
// The comparison table the adapter benches print too (its rows reach docs/benchmarks.md's summary).
import { printComparisons } from '../../conformance/src/bench/report.js';
import { metricsCostPerRequest } from './handler-cost.js';
import { type LoadResult, formatResult, runLoad } from './load.js';
import { BENCH_SECRET, SERVER_KINDS, type ServerKind } from './servers.js';
import { signedEvent } from './stripe-event.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
/** The servers to run, in this order (all by default); a comma and a space stay in a name. */
const KINDS = (process.env.BENCH_SERVERS?.split(/,(?! )/) ?? SERVER_KINDS).map((k) => {
  if (!(SERVER_KINDS as readonly string[]).includes(k)) throw new Error(`unknown server ${k}`);
  return k as ServerKind;
});

interface Server {
  readonly kind: ServerKind;
  readonly url: string;
  cpuUs(): Promise<number>;
  stop(): void;
}

async function startServer(kind: ServerKind): Promise<Server> {
  const child: ChildProcess = fork(new URL('./servers.ts', import.meta.url), [kind]);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return {
    kind,
    url: `http://127.0.0.1:${port}`,
    cpuUs: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { cpuUs: number }).cpuUs));
        child.send('cpu');
      }),
    stop: () => child.kill(),
  };
}

interface Round {
  readonly load: LoadResult;
  /** Server CPU time per answered request, in µs. */
  readonly cpuPerRequestUs: number;
}

async function round(server: Server, tag: string, durationMs: number): Promise<Round> {
  const before = await server.cpuUs();
  const load = await runLoad({
    url: server.url,
    connections: CONNECTIONS,
    requests: 1_000_000,
    durationMs,
    request: (i) => signedEvent(tag, i),
  });
  const cpuPerRequestUs = ((await server.cpuUs()) - before) / Math.max(1, load.requests);
  return { load, cpuPerRequestUs };
}

/** The aims: [row, ours, the hand-written twin, the ratio aimed at]. */
const COMPARISONS: readonly (readonly [string, ServerKind, ServerKind, number])[] = [
  ['memory stores vs hmac + map twin', 'receiver', 'hmac + map', 0.8],
  ['no-op stores vs hmac twin', 'receiver, no-op stores', 'hmac', 0.9],
  ['via Hono vs the node handler', 'receiver via hono', 'receiver', 0.9],
  ['via Hono vs a Hono route + hmac', 'receiver via hono', 'hono + hmac', 0.9],
  ['via Hono vs a Hono route + hmac + stores', 'receiver via hono', 'hono + hmac + stores', 0.85],
];

const measured = (label: string, r: Round) => ({
  label,
  count: r.load.requests,
  ms: ROUND_MS,
  perSecond: r.load.rps,
});

const median = <T>(xs: readonly T[], by: (x: T) => number): T =>
  [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;

console.log(
  `receiver bench: node ${process.version}, ${cpus().length} CPUs (load average ${loadavg()[0]!.toFixed(1)}), ` +
    `${CONNECTIONS} keep-alive connections, ${ROUNDS} interleaved rounds of ${ROUND_MS / 1000} s per server ` +
    `after ${WARMUP_MS / 1000} s warm-up; ~1.3 KB signed Stripe events, every id new.\n`,
);
const servers: Server[] = [];
try {
  for (const kind of KINDS) servers.push(await startServer(kind));
  for (const s of servers) await round(s, 'warm', WARMUP_MS);
  const rounds = new Map<ServerKind, Round[]>(KINDS.map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) rounds.get(s.kind)!.push(await round(s, `r${r}`, ROUND_MS));
  }
  const results = new Map<ServerKind, Round>();
  for (const [kind, rs] of rounds) {
    const mid = median(rs, (x) => x.load.rps);
    const cpu = median(rs, (x) => x.cpuPerRequestUs).cpuPerRequestUs;
    results.set(kind, { load: mid.load, cpuPerRequestUs: cpu });
    console.log(`${formatResult(kind, mid.load)}  server CPU ${cpu.toFixed(0)} µs/req`);
  }
  const rps = (k: ServerKind) => results.get(k)!.load.rps;
  const cpu = (k: ServerKind) => results.get(k)!.cpuPerRequestUs;
  const line = (label: string, a: ServerKind, b: ServerKind) =>
    results.has(a) &&
    results.has(b) &&
    console.log(
      `${label.padEnd(40)} ${(rps(a) / rps(b)).toFixed(2)}× req/s   ${(cpu(b) / cpu(a)).toFixed(2)}× by CPU per request`,
    );
  console.log('');
  line('(c) receiver / (b) hand-written twin', 'receiver', 'hmac');
  line("(c) receiver / (b') twin keeping a map", 'receiver', 'hmac + map');
  line('(c) receiver / (a) bare server', 'receiver', 'bare');
  line('receiver, no-op stores / twin', 'receiver, no-op stores', 'hmac');
  line('receiver+metrics / receiver', 'receiver+metrics', 'receiver');
  line('receiver via hono / receiver', 'receiver via hono', 'receiver');
  line('receiver via hono / hono + hmac', 'receiver via hono', 'hono + hmac');
  line('receiver via hono / hono + stores', 'receiver via hono', 'hono + hmac + stores');
  printComparisons(
    `Receiver over node:http (${CONNECTIONS} connections, median of ${ROUNDS} interleaved rounds, load average ${loadavg()[0]!.toFixed(1)})`,
    COMPARISONS.filter(([, a, b]) => results.has(a) && results.has(b)).map(([name, a, b, aim]) => ({
      name,
      ours: measured(a, results.get(a)!),
      raw: measured(b, results.get(b)!),
      aim,
    })),
  );
  if (KINDS.includes('receiver+metrics')) {
    const cost = await metricsCostPerRequest(BENCH_SECRET);
    console.log(
      `\nmetrics on the receive path in one process (handler called directly, no-op stores): ` +
        `${cost.withoutUs.toFixed(1)} µs/req without, ${cost.withUs.toFixed(1)} with ` +
        `(${(cost.withUs - cost.withoutUs).toFixed(1)} µs for the metrics calls)`,
    );
  }
  // Other work on the machine moves every figure; CPU per request moves least (see README.md).
  console.log(`\nload average at the end: ${loadavg()[0]!.toFixed(1)}`);
} finally {
  for (const s of servers) s.stop();
}
