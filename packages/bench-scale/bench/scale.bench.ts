/**
 * How worker throughput scales with processes on one queue, and where it stops, in one run:
 *
 * - RabbitMQ (one quorum queue) with 1, 2 and 4 worker processes, guard = PostgreSQL event record;
 * - the embedded default (one SQLite file, synchronous 'full') with 1, 2 and 4 processes, guard =
 *   the same file's event record;
 * - Kafka with 1, 4 and 16 partitions, guard = PostgreSQL: one process per partition up to 4
 *   (1 → 1 process, 4 → 4, 16 → 4 processes of 4 partitions each). A partition is read by one
 *   group member at a time, so processes past the partition count would idle; past 4, more
 *   processes on 2 cores add runtimes and group members (heartbeats, longer rebalances), not CPU.
 *
 * Every process is a separate `createWorker` (concurrency BENCH_CONCURRENCY, default 8, the
 * worker's default) over the lane's transport and guard store, with a handler that waits
 * BENCH_HANDLER_MS (default 1 ms, a timer: simulated I/O), so one process is bounded by its
 * concurrency and latency, and more processes can help until something saturates. The queue is
 * filled before the processes start; they are spawned and connected first, then told to go
 * together. The rate is taken between the 10th and 90th percentile handled event (start-up,
 * group joins and the tail left out). Over the same window: each worker process's CPU
 * (process.cpuUsage, % of one core), the guard's PostgreSQL backends, the broker's server
 * process, and the whole machine (busy and iowait, % of all cores).
 *
 * A run ends when the queue is drained or BENCH_RUN_SECONDS (default 6) after its first handled
 * event, whichever comes first (what is left is deleted with the queue), so the bench takes a few minutes
 * whatever the machine's load. Rounds are interleaved (every configuration once per round), the
 * median round is printed. One round by default (each run spawns its processes and fills its
 * queue: about 25 s a configuration on a loaded 2-core machine); BENCH_ROUNDS=3 for medians. Prints, never fails on a time. Env: BENCH_EVENTS
 * (queued per run, default 3000; Kafka runs ×1.5), BENCH_ROUNDS (default 1), BENCH_ONLY (comma-separated: rabbitmq, embedded, kafka), plus the
 * brokers' usual ONCEFLOW_AMQP_URL, ONCEFLOW_KAFKA_BROKERS, ONCEFLOW_PG_URL.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { machineCpu, pidsMatching, processCpuMs } from './cpu.js';
import { type Broker, type Lane, PG_URL, fillLane, removeLane } from './lanes.js';
import { type Series, type Window, growth, steadyWindow } from './window.js';
import type { WorkerMessage } from './worker-process.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const HANDLER_MS = Number(process.env.BENCH_HANDLER_MS ?? 1);
const POOL_MAX = 8;
/** Each run stops at this, drained or not: on a busy machine a full queue could take minutes. */
const RUN_MS = Number(process.env.BENCH_RUN_SECONDS ?? 6) * 1000;
const START_MS = 60_000;
const only = (process.env.BENCH_ONLY ?? 'rabbitmq,embedded,kafka').split(',');

interface Config {
  readonly label: string;
  readonly broker: Broker;
  readonly processes: number;
  readonly partitions?: number;
}

const configs: Config[] = [
  ...[1, 2, 4].map((p) => ({
    label: `RabbitMQ, ${p} proc`,
    broker: 'rabbitmq' as const,
    processes: p,
  })),
  ...[1, 2, 4].map((p) => ({
    label: `embedded, ${p} proc`,
    broker: 'embedded' as const,
    processes: p,
  })),
  ...[1, 4, 16].map((partitions) => ({
    label: `Kafka ${partitions} part, ${Math.min(partitions, 4)} proc`,
    broker: 'kafka' as const,
    processes: Math.min(partitions, 4),
    partitions,
  })),
].filter((c) => only.includes(c.broker));

/** What the broker's own server process is called, to read its CPU. */
const BROKER_PROCESS: Partial<Record<Broker, string>> = {
  rabbitmq: 'beam.smp',
  kafka: 'kafka.Kafka',
};

interface Result {
  readonly config: Config;
  readonly window: Window;
  /** Events handled in the run (of those queued). */
  readonly handled: number;
  readonly queued: number;
  /** Per worker process, % of one core inside the window. */
  readonly workerCpu: number[];
  /** Worker CPU per event, all processes, µs. */
  readonly workerUsPerEvent: number;
  /** The guard's PostgreSQL backends, % of one core (undefined: no PostgreSQL). */
  readonly postgres?: number;
  /** The broker's server process, % of one core. */
  readonly broker?: number;
  /** Whole machine, % of all cores. */
  readonly machineBusy: number;
  readonly machineIowait: number;
  readonly rssMiB: number[];
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const run = randomBytes(3).toString('hex');
const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
const temp = mkdtempSync(join(tmpdir(), 'onceflow-scale-'));
const workerFile = new URL('./worker-process.ts', import.meta.url).pathname;
let runs = 0;

function spawnWorker(lane: Lane, appName: string): ChildProcess {
  return fork(workerFile, {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
    env: {
      ...process.env,
      BENCH_LANE: JSON.stringify(lane),
      BENCH_CONCURRENCY: String(CONCURRENCY),
      BENCH_HANDLER_MS: String(HANDLER_MS),
      BENCH_POOL_MAX: String(POOL_MAX),
      BENCH_APP_NAME: appName,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

const nextMessage = <T extends WorkerMessage['type']>(child: ChildProcess, type: T) =>
  new Promise<Extract<WorkerMessage, { type: T }>>((resolve, reject) => {
    const onMessage = (m: WorkerMessage) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      resolve(m as Extract<WorkerMessage, { type: T }>);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before '${type}'`)));
  });

/** Counters sampled every 100 ms in this process while the workers run. */
function startSampler(pgPids: number[], brokerPids: number[]) {
  const t: number[] = [];
  const busy: number[] = [];
  const iowait: number[] = [];
  const total: number[] = [];
  const postgres: number[] = [];
  const broker: number[] = [];
  const sample = () => {
    const m = machineCpu();
    t.push(performance.timeOrigin + performance.now());
    busy.push(m.busyMs);
    iowait.push(m.iowaitMs);
    total.push(m.totalMs);
    postgres.push(pgPids.reduce((s, pid) => s + processCpuMs(pid), 0));
    broker.push(brokerPids.reduce((s, pid) => s + processCpuMs(pid), 0));
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const of = (v: number[]): Series => ({ t, v });
      return {
        busy: of(busy),
        iowait: of(iowait),
        total: of(total),
        postgres: of(postgres),
        broker: of(broker),
      };
    },
  };
}

async function runOnce(config: Config): Promise<Result> {
  const id = `${run}-${++runs}`;
  const count = config.broker === 'kafka' ? Math.round(EVENTS * 1.5) : EVENTS;
  const lane: Lane = {
    broker: config.broker,
    name: `onceflow-scale-${id}`,
    ...(config.partitions ? { partitions: config.partitions } : {}),
    ...(config.broker === 'embedded'
      ? { sqlitePath: join(temp, `${id}.db`) }
      : { pgSchema: `onceflow_scale_${id.replace('-', '_')}` }),
  };
  const appName = `onceflow-scale-${id}`;
  await fillLane(lane, count, admin);
  const children = Array.from({ length: config.processes }, () => spawnWorker(lane, appName));
  try {
    await Promise.all(children.map((c) => nextMessage(c, 'ready')));
    const pgPids = lane.pgSchema
      ? (
          await admin.query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
            [appName],
          )
        ).rows.map((r) => r.pid)
      : [];
    const brokerName = BROKER_PROCESS[config.broker];
    // The broker is the matching process that has used the most CPU (a long-running server), not
    // a short-lived tool whose command line happens to match and that may exit mid-run.
    const brokerPid = brokerName
      ? pidsMatching(brokerName).sort((a, b) => processCpuMs(b) - processCpuMs(a))[0]
      : undefined;
    const sampler = startSampler(pgPids, brokerPid === undefined ? [] : [brokerPid]);

    // Ends drained, or RUN_MS after the first event was handled (a Kafka group join is not
    // counted against it), or after START_MS without any event at all.
    const handled = new Array<number>(children.length).fill(0);
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, START_MS);
      for (const [i, child] of children.entries())
        child.on('message', (m: WorkerMessage) => {
          if (m.type !== 'progress') return;
          const before = handled.reduce((a, b) => a + b, 0);
          handled[i] = m.handled;
          const total = handled.reduce((a, b) => a + b, 0);
          if (before === 0 && total > 0) {
            clearTimeout(timer);
            timer = setTimeout(resolve, RUN_MS);
          }
          if (total >= count) resolve();
        });
      for (const child of children) child.send('go');
    });
    clearTimeout(timer);
    const done = children.map((c) => nextMessage(c, 'done'));
    for (const child of children) child.send('stop');
    const reports = await Promise.all(done);
    const machine = sampler.stop();

    const window = steadyWindow(reports.flatMap((r) => r.handledAt));
    if (!window) throw new Error(`${config.label}: too few events handled`);
    const ms = window.to - window.from;
    const workerCpuMs = reports.map((r) =>
      growth({ t: r.cpu.map((s) => s.t), v: r.cpu.map((s) => s.cpuMs) }, window),
    );
    const cores = cpus().length;
    const machineTotal = growth(machine.total, window) || ms * cores;
    return {
      config,
      window,
      handled: reports.reduce((n, r) => n + r.handledAt.length, 0),
      queued: count,
      workerCpu: workerCpuMs.map((c) => (c / ms) * 100),
      workerUsPerEvent: (workerCpuMs.reduce((a, b) => a + b, 0) * 1000) / window.events,
      ...(pgPids.length ? { postgres: (growth(machine.postgres, window) / ms) * 100 } : {}),
      ...(brokerName ? { broker: (growth(machine.broker, window) / ms) * 100 } : {}),
      machineBusy: (growth(machine.busy, window) / machineTotal) * 100,
      machineIowait: (growth(machine.iowait, window) / machineTotal) * 100,
      rssMiB: reports.map((r) => r.rssBytes / 2 ** 20),
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    await removeLane(lane, admin).catch(() => undefined);
    if (lane.sqlitePath)
      for (const suffix of ['', '-wal', '-shm']) rmSync(lane.sqlitePath + suffix, { force: true });
  }
}

const loadBefore = load();
const rounds: Result[][] = configs.map(() => []);
try {
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, config] of configs.entries()) {
      const result = await runOnce(config);
      rounds[i]?.push(result);
      // A line per run as it ends, so a stopped bench keeps what it measured.
      console.log(
        `round ${r + 1}: ${config.label}: ${Math.round(result.window.perSecond)}/s (${result.handled}/${result.queued} handled), workers ${result.workerCpu.map((c) => `${Math.round(c)}%`).join(' ')}, machine ${Math.round(result.machineBusy)}%, load ${load()}`,
      );
    }
} finally {
  await admin.end();
  rmSync(temp, { recursive: true, force: true });
}

const median = (results: Result[]) => {
  const sorted = [...results].sort((a, b) => a.window.perSecond - b.window.perSecond);
  return sorted[Math.floor(sorted.length / 2)] as Result;
};
const rows = rounds.map(median);
const pct = (n: number | undefined) => (n === undefined ? '-' : `${Math.round(n)}%`);
const base = new Map<string, number>();
for (const row of rows)
  if (!base.has(row.config.broker)) base.set(row.config.broker, row.window.perSecond);

console.log(
  `\nWorker processes on one queue: ${CONCURRENCY} handlers per process, each waiting ${HANDLER_MS} ms (timer), guard on the lane's store; ${EVENTS} events per run (Kafka ${Math.round(EVENTS * 1.5)}), runs end drained or after ${RUN_MS / 1000} s, rate over the 10-90 % handled, median of ${ROUNDS} interleaved rounds; ${cpus().length} cores, load average ${loadBefore} before, ${load()} after.`,
);
console.log(
  'CPU columns: % of one core inside the same window (worker: each process; PG: the guard pool backends; broker: its server process); machine: % of all cores.',
);
const header = [
  'configuration'.padEnd(24),
  'events/s'.padStart(9),
  'handled'.padStart(11),
  'vs 1st'.padStart(7),
  'worker CPU each'.padEnd(22),
  'µs/evt'.padStart(7),
  'PG'.padStart(5),
  'broker'.padStart(7),
  'machine'.padStart(8),
  'iowait'.padStart(7),
  'RSS MiB each',
];
console.log(header.join(' '));
for (const row of rows) {
  const first = base.get(row.config.broker) ?? row.window.perSecond;
  console.log(
    [
      row.config.label.padEnd(24),
      Math.round(row.window.perSecond).toLocaleString('en').padStart(9),
      `${row.handled}/${row.queued}`.padStart(11),
      `${(row.window.perSecond / first).toFixed(2)}x`.padStart(7),
      row.workerCpu.map(pct).join(' ').padEnd(22),
      String(Math.round(row.workerUsPerEvent)).padStart(7),
      pct(row.postgres).padStart(5),
      pct(row.broker).padStart(7),
      pct(row.machineBusy).padStart(8),
      pct(row.machineIowait).padStart(7),
      row.rssMiB.map((m) => m.toFixed(0)).join(' '),
    ].join(' '),
  );
}
