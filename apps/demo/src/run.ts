import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createBacklogMonitor,
  createMetrics,
  createMetricsHandler,
  createProbes,
  createReceiver,
  createRelay,
  createStoreMonitor,
  github,
  type Inbox,
  type RecordStore,
  shutdown,
  stripe,
  type Transport,
} from '@onceflow/core';
import { recordedEventId } from './handlers.js';
import { startPaymentsApi } from './payments.js';
import { runSender } from './sender.js';
import { openStack } from './stack.js';
import { idsInState, type Summary, summarise } from './summary.js';
import { untilDone } from './wait.js';

export interface DemoOptions {
  readonly broker: string;
  /** Stripe events; GitHub deliveries are a quarter of that. */
  readonly events: number;
  /** SIGKILL the worker mid-batch (twice) and start a new one. */
  readonly kill: boolean;
  /**
   * One entry per worker process, in order: where it SIGKILLs itself (`charge:<n>`: right after
   * its n-th charge, before the ledger and the record; `dead-letter:<n>`: right after its n-th
   * dead letter is recorded, before the broker is told). A worker that did is replaced.
   */
  readonly dieAt?: readonly string[] | undefined;
  /** Send the three poison events (default true). */
  readonly poison?: boolean | undefined;
  /**
   * The outbound step (default true): each payment's transaction also adds a `payment.recorded`
   * event to the outbox, which the worker process's dispatcher publishes and the worker handles.
   */
  readonly outbound?: boolean | undefined;
  /**
   * Called once every accepted event is completed or dead-lettered, before anything closes, with
   * the `/metrics` URLs of the receiver process and of the current worker process.
   */
  readonly beforeClose?: ((metricsUrls: readonly string[]) => Promise<void>) | undefined;
  /**
   * Called with the run's record store and transport after the summary, before they close (the
   * workers have stopped): `pnpm demo --console` serves the console over them from here.
   */
  readonly afterRun?:
    | ((stores: {
        records: RecordStore;
        inbox: Inbox;
        transport: Transport;
        summary: Summary;
      }) => Promise<void>)
    | undefined;
  readonly log: (line: string) => void;
}

const workerEntry = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

function forkWorker(
  args: string[],
  outbound: boolean,
  onSuppressed: (n: number) => void,
  onHeap: (n: number) => void,
  dieAt: string | undefined,
): Promise<{ child: ChildProcess; metricsUrl: string }> {
  const child = fork(workerEntry, args, {
    execArgv: ['--conditions=@onceflow/source', '--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, DEMO_DIE_AT: dieAt ?? '', DEMO_OUTBOUND: outbound ? '1' : '0' },
  });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { kind: string; count?: number; heapUsed?: number; url?: string }) => {
      if (m.kind === 'ready') resolve({ child, metricsUrl: m.url ?? '' });
      if (m.kind === 'suppressed') onSuppressed(m.count ?? 0);
      if (m.kind === 'heap') onHeap(m.heapUsed ?? 0);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with code ${code}`)));
  });
}

/** Runs the whole demo once and returns its summary. */
export async function runDemo(options: DemoOptions): Promise<Summary> {
  const runId = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-demo-'));
  const stripeSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const githubSecret = randomBytes(16).toString('hex');
  const stack = await openStack(options.broker, { dir, runId, owner: true });
  const payments = await startPaymentsApi();
  const metrics = createMetrics();
  const receiver = createReceiver({
    sources: {
      stripe: stripe({ secrets: [stripeSecret] }),
      github: github({ secrets: [githubSecret] }),
    },
    inbox: stack.inbox,
    transport: stack.transport,
    metrics,
  });
  const relay = createRelay({
    inbox: stack.inbox,
    transport: stack.transport,
    olderThanMs: 2000,
    intervalMs: 500,
    metrics,
  });
  // The receiver's process serves /metrics and the probes beside the webhooks; the monitors keep
  // its gauges current.
  const serveMetrics = createMetricsHandler(metrics);
  const probes = createProbes({ store: stack.inbox, transport: stack.transport, receiver });
  const receive = receiver.nodeHandler();
  // serverOptions: the receiver's header deadline (408 for a client that never finishes them).
  const server = createServer(receiver.serverOptions, (req, res) => {
    if (req.url === '/metrics') void serveMetrics.node(req, res);
    else if (req.url === '/healthz') void probes.live.node(req, res);
    else if (req.url === '/readyz') void probes.ready.node(req, res);
    else receive(req, res);
  });
  const monitors = [
    createStoreMonitor({ metrics, inbox: stack.inbox, records: stack.records, intervalMs: 500 }),
    createBacklogMonitor({ metrics, transports: [stack.transport], intervalMs: 500 }),
  ];
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await relay.start();
  for (const m of monitors) m.start();

  let workerSuppressed = 0;
  // Heap samples (after GC) of the current worker process; a new process starts a new series.
  let heapSamples: number[] = [];
  const workerArgs = [options.broker, dir, runId, payments.url];
  const outbound = options.outbound ?? true;
  let generation = 0;
  let kills = 0;
  let stopping = false;
  const killedHere = new WeakSet<ChildProcess>();
  let workerMetricsUrl = '';
  const spawn = async (): Promise<ChildProcess> => {
    heapSamples = [];
    const { child, metricsUrl } = await forkWorker(
      workerArgs,
      outbound,
      (n) => {
        workerSuppressed += n;
      },
      (h) => heapSamples.push(h),
      options.dieAt?.[generation++],
    );
    workerMetricsUrl = metricsUrl;
    // A worker that SIGKILLed itself at its die point is counted (even once the run is
    // stopping: a die point right after the last record can end the wait before its exit is
    // seen) and, unless the run is stopping, replaced like one killed from here.
    child.once('exit', (_code, signal) => {
      if (killedHere.has(child) || signal !== 'SIGKILL') return;
      kills++;
      if (stopping) return;
      options.log('  the worker died at its die point (SIGKILL) and a new one was started');
      replacing = spawn().then((next) => {
        worker = next;
      });
    });
    return child;
  };
  let replacing: Promise<void> = Promise.resolve();
  let worker = await spawn();
  const good = options.events + Math.floor(options.events / 4);
  options.log(
    `demo ${runId}: broker ${stack.broker}, ${good} good events + 3 poison, receiver ${receiverUrl}`,
  );

  // Kill the worker mid-batch, twice, and start a fresh one each time.
  const killer = (async () => {
    if (!options.kill) return;
    for (const fraction of [0.25, 0.6]) {
      await untilDone('ledger progress', async () => {
        const rows = (await stack.ledger.rowsByEvent()).size;
        return rows >= good * fraction ? true : rows;
      });
      killedHere.add(worker);
      worker.kill('SIGKILL');
      kills++;
      options.log(
        `  killed the worker (SIGKILL) at ${Math.round(fraction * 100)}% and started a new one`,
      );
      worker = await spawn();
    }
  })();

  // The worker armed to die at a dead letter must be the one that meets the poison: held back
  // until every worker before it has died at its point and it is running (else an earlier worker
  // may dead-letter all the poison and the point never comes).
  const dieAt = options.dieAt ?? [];
  const deadLetterWorker = dieAt.findIndex((point) => point.startsWith('dead-letter:'));
  const poisonAfter =
    deadLetterWorker < 0
      ? undefined
      : async () => {
          await untilDone(`the worker that dies at ${dieAt[deadLetterWorker]}`, async () => {
            if (kills >= deadLetterWorker) return true;
            return kills * 1e9 + (await stack.ledger.rowsByEvent()).size;
          });
          await replacing;
        };
  const sent = await runSender({
    poisonAfter,
    receiverUrl,
    stripeSecret,
    githubSecret,
    runId,
    stripeEvents: options.events,
    githubEvents: Math.floor(options.events / 4),
    concurrency: 16,
    poison: options.poison ?? true,
  });
  await killer;
  // From the event record: every accepted event completed or dead-lettered, the outbound event
  // of every charged payment (from the outbox) completed too, and every die point passed. Counts
  // show progress; the ids are compared only once the counts are there.
  await untilDone('every accepted event to be processed or dead-lettered', async () => {
    const recorded = outbound ? [...payments.chargesByEvent().keys()].map(recordedEventId) : [];
    const finished =
      (await stack.records.count({ state: 'completed' })) +
      (await stack.records.count({ state: 'dead-lettered' }));
    const progress = finished + kills;
    if (kills < dieAt.length || finished < sent.accepted.size + recorded.length) return progress;
    const done = await idsInState(stack.records, 'completed');
    const dead = await idsInState(stack.records, 'dead-lettered');
    const all =
      [...sent.accepted].every((id) => done.has(id) || dead.has(id)) &&
      recorded.every((id) => done.has(id));
    return all ? true : progress;
  });
  if (options.beforeClose) {
    await replacing;
    for (const m of monitors) await m.runOnce();
    await options.beforeClose([`${receiverUrl}/metrics`, workerMetricsUrl]);
  }

  stopping = true;
  await replacing;
  await new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.send({ kind: 'stop' });
  });
  const left = await shutdown({ receiver, servers: [server], close: [relay, ...monitors] });
  if (left.timedOut || left.notClosed.length > 0)
    throw new Error(`the receiver did not shut down cleanly: ${JSON.stringify(left)}`);

  const summary = await summarise({
    outbound,
    sent,
    stack,
    metrics,
    payments,
    workerSuppressed,
    kills,
    heapSamples,
  });
  await options.afterRun?.({
    records: stack.records,
    inbox: stack.inbox,
    transport: stack.transport,
    summary,
  });
  await payments.close();
  await stack.close();
  return summary;
}
