/**
 * Memory per 10k in-flight and per 10k retained events, in each process that holds them: every
 * scenario of memory-process.ts runs alone in a fresh process (--expose-gc), one after another,
 * and prints heap, external (Buffers) and RSS growth per event after `global.gc()`, while the
 * events are still held. RSS rarely shrinks after a collection: read it as the peak's share.
 * Prints, never fails. Env: BENCH_HELD (default 10000), BENCH_ONLY (comma-separated scenarios),
 * ONCEFLOW_PG_URL, ONCEFLOW_AMQP_URL.
 */
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import type { MemoryReading } from './memory-process.js';

const SCENARIOS: readonly (readonly [string, string])[] = [
  ['store', 'memory store, completed records retained'],
  ['receiver-memory', 'receiver + memory inbox, accepted events retained'],
  ['receiver-postgres', 'receiver + PostgreSQL inbox, accepted events'],
  ['receiver-memory-in-flight', 'receiver + memory inbox, requests in flight'],
  ['receiver-postgres-in-flight', 'receiver + PostgreSQL inbox, requests in flight'],
  ['worker-memory', 'worker, memory transport + store, deliveries in flight'],
  ['worker-rabbitmq', 'worker, RabbitMQ + PostgreSQL guard, deliveries in flight'],
  ['worker-embedded', 'worker, embedded (SQLite), deliveries in flight'],
];
const only = process.env.BENCH_ONLY?.split(',');
const TIMEOUT_MS = 90_000;
const file = new URL('./memory-process.ts', import.meta.url).pathname;

function measureIn(scenario: string): Promise<MemoryReading> {
  return new Promise((resolve, reject) => {
    const child = fork(file, [scenario], {
      execArgv: ['--expose-gc', '--conditions=@onceflow/source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const timer = setTimeout(() => child.kill(), TIMEOUT_MS);
    let reading: MemoryReading | undefined;
    child.on('message', (m) => {
      reading = m as MemoryReading;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (reading) resolve(reading);
      else
        reject(new Error(`${scenario} exited ${code ?? signal} (timeout ${TIMEOUT_MS / 1000} s)`));
    });
  });
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const before = load();
const rows: string[] = [];
let held = 0;
for (const [scenario, label] of SCENARIOS) {
  if (only && !only.includes(scenario)) continue;
  const r = await measureIn(scenario).catch((err: Error) => err);
  if (r instanceof Error) {
    rows.push(`${label.padEnd(58)} failed: ${r.message}`);
    continue;
  }
  held = r.held;
  const kb = (bytes: number) => (bytes / 1024 / r.held).toFixed(2).padStart(8);
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1).padStart(7);
  rows.push(
    `${label.padEnd(58)} ${kb(r.heap)} ${kb(r.external)} ${kb(r.rss)}   ${mb(r.heap)} ${mb(r.external)} ${mb(r.rss)}`,
  );
}
console.log(
  `\nMemory per held event (${held.toLocaleString('en')} held, ~700 B payloads; growth after global.gc(), each scenario in its own process); load average ${before} before, ${load()} after.`,
);
console.log(
  `${'scenario'.padEnd(58)} ${'heap KB'.padStart(8)} ${'ext KB'.padStart(8)} ${'RSS KB'.padStart(8)}   ${'heap MB'.padStart(7)} ${'ext MB'.padStart(7)} ${'RSS MB'.padStart(7)}  (per event | total)`,
);
for (const row of rows) console.log(row);
