/**
 * The demo's worker, run as a child process so the demo can SIGKILL it mid-batch and start a new
 * one: what the killed process held comes back after its lock expires, and the processed mark
 * written with the ledger row (the event record's `completed`) keeps the effect single.
 *
 * argv: <broker> <dir> <runId> <paymentsUrl>
 */
import { createMetrics, createWorker } from '@onceflow/core';
import { demoHandlers } from './handlers.js';
import { openStack } from './stack.js';

async function main(): Promise<void> {
  const [broker, dir, runId, paymentsUrl] = process.argv.slice(2);
  if (!broker || !dir || !runId || !paymentsUrl)
    throw new Error('usage: worker-process <broker> <dir> <runId> <paymentsUrl>');
  const stack = await openStack(broker, { dir, runId });
  const metrics = createMetrics();
  const worker = createWorker({
    transport: stack.transport,
    records: stack.records,
    handlers: demoHandlers({ ledger: stack.ledger, paymentsUrl }),
    concurrency: 8,
    retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 400 },
    shutdownTimeoutMs: 5000,
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

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await worker.close();
    clearInterval(timer);
    await report();
    await stack.close();
    process.disconnect?.();
  };
  process.on('SIGTERM', () => void stop());
  process.on('message', (m: { kind?: string }) => {
    if (m.kind === 'stop') void stop();
  });
  await worker.start();
  process.send?.({ kind: 'ready', heapUsed: process.memoryUsage().heapUsed });
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
