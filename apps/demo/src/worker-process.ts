/**
 * The demo's worker, run as a child process so the demo can SIGKILL it mid-batch and start a new
 * one: what the killed process held comes back after its lock expires, and the processed mark
 * written with the ledger row (the event record's `completed`) keeps the effect single.
 *
 * argv: <broker> <dir> <runId> <paymentsUrl>
 * env DEMO_DIE_AT: `charge:<n>` (SIGKILL itself right after its n-th charge, before the ledger row
 * and the record are written) or `dead-letter:<n>` (right after its n-th dead letter is recorded,
 * before the broker is told): the two windows a crash must be harmless in.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMetrics,
  createMetricsHandler,
  createOutboxDispatcher,
  createProbes,
  createWorker,
  drainOnSignal,
  type RecordStore,
} from '@onceflow/core';
import { demoHandlers } from './handlers.js';
import { DEMO_LOCK_MS } from './lock.js';
import { openStack } from './stack.js';

async function main(): Promise<void> {
  const [broker, dir, runId, paymentsUrl] = process.argv.slice(2);
  if (!broker || !dir || !runId || !paymentsUrl)
    throw new Error('usage: worker-process <broker> <dir> <runId> <paymentsUrl>');
  const stack = await openStack(broker, { dir, runId });
  const metrics = createMetrics();
  const [dieAt, dieAfter] = (process.env.DEMO_DIE_AT ?? '').split(':');
  const outbound = process.env.DEMO_OUTBOUND !== '0';
  const dieOn = (point: string) => {
    let seen = 0;
    return () => {
      if (dieAt === point && ++seen === Number(dieAfter)) process.kill(process.pid, 'SIGKILL');
    };
  };
  const afterDeadLetter = dieOn('dead-letter');
  const r = stack.records;
  const records: RecordStore = {
    begin: (envelope, o) => r.begin(envelope, o),
    extend: (source, id, token, ms) => r.extend(source, id, token, ms),
    complete: (source, id, token, options) => r.complete(source, id, token, options),
    release: (source, id, token) => r.release(source, id, token),
    scheduleRetry: (source, id, token, retry) => r.scheduleRetry(source, id, token, retry),
    async deadLetter(envelope, token, fields) {
      await r.deadLetter(envelope, token, fields);
      afterDeadLetter();
    },
    get: (source, id) => r.get(source, id),
    list: (query) => r.list(query),
    count: (filter) => r.count(filter),
    act: (source, id, action) => r.act(source, id, action),
  };
  const worker = createWorker({
    transport: stack.transport,
    records: dieAt === 'dead-letter' ? records : stack.records,
    handlers: demoHandlers({
      ledger: stack.ledger,
      paymentsUrl,
      onCharged: dieOn('charge'),
      outbound,
    }),
    concurrency: 8,
    retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 400 },
    shutdownTimeoutMs: 5000,
    metrics,
  });

  // The outbound events the payment handler added to the outbox, published on the same transport
  // for this worker (or its successor: a killed dispatcher's lease runs out like its worker's lock).
  const dispatcher = createOutboxDispatcher({
    outbox: stack.outbox,
    transport: stack.transport,
    leaseMs: DEMO_LOCK_MS,
    pollIntervalMs: 50,
    retryMaxDelayMs: 1000,
    metrics,
  });

  let reported = 0;
  const report = async (): Promise<void> => {
    const value = (await metrics.duplicatesSuppressed.get()).values.reduce(
      (n, v) => n + v.value,
      0,
    );
    if (value > reported && process.send)
      process.send({ kind: 'suppressed', count: value - reported });
    reported = value;
  };
  const timer = setInterval(() => void report(), 100);

  // The worker's own counters (processed, retries, dead letters, handler time) on /metrics, and
  // its probes: ready once consuming, live while no delivery is stalled.
  const serveMetrics = createMetricsHandler(metrics);
  const probes = createProbes({ worker, store: stack.records, transport: stack.transport });
  const server = createServer((req, res) => {
    if (req.url === '/healthz') void probes.live.node(req, res);
    else if (req.url === '/readyz') void probes.ready.node(req, res);
    else void serveMetrics.node(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.unref();

  // SIGTERM or the demo's `stop`: in-flight deliveries finish, the last count is reported, the
  // stack closes; the process then ends on its own, after the IPC channel is let go.
  const drain = drainOnSignal({
    worker,
    servers: [server],
    close: [() => clearInterval(timer), report, dispatcher, stack],
    signals: ['SIGTERM'],
    exit: false,
    onDrained: () => process.disconnect?.(),
  });
  process.on('message', (m: { kind?: string }) => {
    if (m.kind === 'stop') void drain.shutdown();
  });
  await worker.start();
  if (outbound) dispatcher.start();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  process.send?.({ kind: 'ready', url, heapUsed: process.memoryUsage().heapUsed });
  // Heap after a full GC (the demo forks with --expose-gc), so samples compare live memory only.
  const gc = (globalThis as { gc?: () => void }).gc;
  setInterval(() => {
    gc?.();
    // Stopping disconnects the channel while this timer may still fire.
    if (process.connected)
      process.send?.({ kind: 'heap', heapUsed: process.memoryUsage().heapUsed });
  }, 500).unref();
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
