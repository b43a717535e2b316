/**
 * One worker process of the scaling bench. Env: BENCH_LANE (a `Lane` as JSON), BENCH_CONCURRENCY,
 * BENCH_HANDLER_MS (the handler's simulated I/O, a timer), BENCH_POOL_MAX, BENCH_APP_NAME (the
 * guard pool's `application_name`, so the parent finds its PostgreSQL backends).
 *
 * IPC: sends `ready` once its transport and store are open; on `go` starts the worker (the
 * processed-guard on the lane's store around a handler that waits BENCH_HANDLER_MS), sends
 * `progress` every 100 ms; on `stop` closes and sends `done` with the time each event was handled
 * and its own CPU (process.cpuUsage) sampled every 100 ms, then exits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_EVENT_TYPE } from '@onceflow/conformance/bench';
import { createWorker, defineHandler } from '@onceflow/core';
import { type Lane, openWorkerSide } from './lanes.js';

export interface CpuSample {
  /** Epoch ms. */
  readonly t: number;
  /** This process's CPU (user + system) since `go`, ms. */
  readonly cpuMs: number;
}

export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly handled: number }
  | {
      readonly type: 'done';
      readonly handledAt: number[];
      readonly cpu: CpuSample[];
      readonly rssBytes: number;
    };

const lane = JSON.parse(process.env.BENCH_LANE ?? '{}') as Lane;
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const handlerMs = Number(process.env.BENCH_HANDLER_MS ?? 1);
const send = (m: WorkerMessage) => process.send?.(m);
const now = () => performance.timeOrigin + performance.now();

const side = await openWorkerSide(lane, {
  poolMax: Number(process.env.BENCH_POOL_MAX ?? 8),
  applicationName: process.env.BENCH_APP_NAME ?? 'onceflow-bench-scale',
});
const handledAt: number[] = [];
const worker = createWorker({
  transport: side.transport,
  records: side.records,
  concurrency,
  handlers: [
    defineHandler({
      type: BENCH_EVENT_TYPE,
      handle: async () => {
        await sleep(handlerMs);
        handledAt.push(now());
      },
    }),
  ],
});

const cpu: CpuSample[] = [];
let cpu0: NodeJS.CpuUsage | undefined;
let ticker: NodeJS.Timeout | undefined;
const sample = () => {
  const used = process.cpuUsage(cpu0);
  cpu.push({ t: now(), cpuMs: (used.user + used.system) / 1000 });
};

process.on('message', (m) => {
  if (m === 'go') {
    cpu0 = process.cpuUsage();
    sample();
    ticker = setInterval(() => {
      sample();
      send({ type: 'progress', handled: handledAt.length });
    }, 100);
    void worker.start();
  }
  if (m === 'stop') void stop();
});

async function stop(): Promise<void> {
  clearInterval(ticker);
  sample();
  await worker.close();
  send({ type: 'done', handledAt, cpu, rssBytes: process.memoryUsage().rss });
  await side.close();
  process.disconnect();
  process.exit(0);
}

send({ type: 'ready' });
