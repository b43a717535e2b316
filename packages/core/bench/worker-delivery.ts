/**
 * The worker's own cost per delivery, without a broker: promises made, bytes allocated and CPU
 * per delivery, over the memory record store, fed through the kit's `runDelivery` by a transport
 * that settles nothing (as an adapter does, with a lock watch per delivery).
 *
 * Run: `node --import tsx --conditions=@onceflow/source --max-semi-space-size=128 --expose-gc
 * bench/worker-delivery.ts`. Env: BENCH_DELIVERIES (5,000 per round), BENCH_ROUNDS (9).
 *
 * Promises are counted with a promise hook in a round of their own (the hook slows everything);
 * allocation is the heap's growth over a round with no garbage collection in it (the semi-space
 * is made large enough; a round that met a collection is reported as such).
 */
import { createHook } from 'node:async_hooks';
import { PerformanceObserver } from 'node:perf_hooks';
import { createEnvelope, createWorker, defineHandler } from '../src/index.js';
import { createMemoryStore } from '../src/testing.js';
import type { Delivery, Transport } from '../src/contracts/transport.js';
import { runDelivery } from '../src/transport-kit/run-delivery.js';
import { watchLock } from '../src/transport-kit/lock-watch.js';

const N = Number(process.env.BENCH_DELIVERIES ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const gc = (globalThis as { gc?: () => void }).gc;

let consumer: ((d: Delivery) => Promise<void>) | undefined;
const transport: Transport = {
  name: 'bench',
  capabilities: {
    brokerDedupe: false,
    orderingPerKey: false,
    lock: { scope: 'message', ms: 30_000 },
    maxDelayMs: 60_000,
    maxMessageBytes: 1 << 20,
    deliveryLimit: false,
    durability: 'none',
  },
  publish: async () => {},
  consume: async (handler) => {
    consumer = handler;
    return { close: async () => {} };
  },
  close: async () => {},
};
const records = createMemoryStore();
const worker = createWorker({
  transport,
  records,
  handlers: [defineHandler({ type: 'bench.event', handle: async () => {} })],
});
await worker.start();
const handler = consumer;
if (handler === undefined) throw new Error('worker did not consume');

const resolved = Promise.resolve();
let seq = 0;
function envelopes(n: number) {
  return Array.from({ length: n }, () =>
    createEnvelope({
      id: `evt_${seq++}`,
      source: 'bench',
      type: 'bench.event',
      payload: { n: seq },
    }),
  );
}
async function round(batch: ReturnType<typeof envelopes>): Promise<void> {
  for (const envelope of batch) {
    const lock = watchLock({ until: Date.now() + 30_000, describe: 'bench lock' });
    await runDelivery(handler as (d: Delivery) => Promise<void>, {
      envelope,
      attempt: 1,
      // As the adapters with a lock watch do: the signal is made only if something reads it.
      get signal() {
        return lock.signal;
      },
      lockLost: () => lock.isLost(),
      ack: () => {
        lock.dispose();
        return resolved;
      },
      retry: () => {
        lock.dispose();
        return resolved;
      },
    });
  }
}

let gcs = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });

await round(envelopes(N)); // warm-up

// Promises per delivery
let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
}).enable();
await round(envelopes(1_000));
hook.disable();
const promisesPer = promises / 1_000;

const rows: { cpuUs: number; bytes: number | undefined }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const batch = envelopes(N);
  gc?.();
  // The observer hears of the collection above asynchronously: let it, before counting.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const gcsBefore = gcs;
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  await round(batch);
  const cpu = process.cpuUsage(cpu0);
  const heap1 = process.memoryUsage().heapUsed;
  await new Promise((resolve) => setImmediate(resolve));
  rows.push({
    cpuUs: (cpu.user + cpu.system) / N,
    bytes: gcs === gcsBefore ? (heap1 - heap0) / N : undefined,
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuUs = median(rows.map((r) => r.cpuUs));
const bytes = rows.flatMap((r) => (r.bytes === undefined ? [] : [r.bytes]));
console.log(
  JSON.stringify({
    deliveries: N,
    rounds: ROUNDS,
    promisesPerDelivery: promisesPer,
    cpuUsPerDelivery: Number(cpuUs?.toFixed(2)),
    bytesPerDelivery:
      bytes.length > 0 ? Math.round(median(bytes) ?? 0) : 'a collection ran in every round',
    roundsWithoutGc: bytes.length,
  }),
);
await worker.close();
