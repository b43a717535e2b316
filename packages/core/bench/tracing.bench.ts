/**
 * Tracing benchmark: what onceflow's spans cost the receiver and the worker, in one process.
 * Three tracers, in interleaved rounds (off, no-op, recording, then no-op, recording, off, …) so
 * that load from elsewhere on the machine hits each alike; each figure is the median round:
 *
 * - `off`: a tracer that hands back one shared span that records nothing: the call sites' floor;
 * - `no-op`: no `tracer` in the config, so the global API's, with no SDK registered: what every
 *   user gets by default (with the context manager and propagator an SDK would install);
 * - `recording`: an SDK tracer (BasicTracerProvider, BatchSpanProcessor, an exporter that drops
 *   the spans), every span sampled.
 *
 * Receiver: `receiver.fetch` of signed Standard Webhooks requests with stores that keep nothing,
 * so the receiver's own cost is measured and tracing's share of it is the largest it can be.
 * Consume: a worker on a memory transport and memory store, a handler that does nothing, from
 * publish to the last completed record. Then the call sites alone in a tight loop (a receipt with
 * its verify, claim and send spans; a delivery's process, handle and settle spans), against the same work with no tracing code at all:
 * what the default tracer costs per operation, in ns. Prints ops/s, CPU per operation and the
 * ratios. Never fails on a time.
 *
 *   pnpm --filter @onceflow/core bench:tracing
 *   BENCH_ROUNDS=7 BENCH_RECEIVES=4000 BENCH_DELIVERIES=2000 pnpm --filter @onceflow/core bench:tracing
 */
import { createHmac, randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { context, INVALID_SPAN_CONTEXT, propagation, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { createEnvelope } from '../src/envelope.js';
import { createMemoryStore } from '../src/memory/store.js';
import { createMemoryTransport } from '../src/memory/transport.js';
import { createReceiver } from '../src/receiver/index.js';
import { standardWebhooks } from '../src/verify/standard-webhooks.js';
import { defineHandler } from '../src/worker/handler.js';
import { createWorker } from '../src/worker/worker.js';
import type { Delivery } from '../src/contracts/transport.js';
import {
  traceDeliveries,
  traceHandler,
  traceVerdict,
} from '../src/observability/trace-delivery.js';
import { publishTraced } from '../src/observability/trace-publish.js';
import {
  injectReceipt,
  traceClaim,
  traceReceipt,
  traceVerify,
} from '../src/observability/trace-receipt.js';
import { resolveTracer } from '../src/observability/tracing.js';
import { noopInbox } from './noop-inbox.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RECEIVES = Number(process.env.BENCH_RECEIVES ?? 3000);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 1500);

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const dropAll: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};
const provider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(dropAll, { maxQueueSize: 65_536 })],
});
const shared = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
const off = { startSpan: () => shared } as unknown as Tracer;
const TRACERS = {
  off,
  'no-op': undefined,
  recording: provider.getTracer('bench'),
} as const;
type Variant = keyof typeof TRACERS;
const VARIANTS = Object.keys(TRACERS) as Variant[];

const secret = randomBytes(24);
const sources = { svc: standardWebhooks({ secrets: [`whsec_${secret.toString('base64')}`] }) };
const filler = randomBytes(300).toString('hex');
let sequence = 0;
function signed(): Request {
  const id = `msg_${++sequence}`;
  const body = JSON.stringify({ type: 'order.paid', timestamp: new Date().toISOString(), filler });
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64');
  return new Request('http://127.0.0.1/webhooks/svc', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': ts,
      'webhook-signature': `v1,${sig}`,
    },
    body,
  });
}

/** Requests per second through `receiver.fetch`, 16 at a time. */
async function receiveRound(variant: Variant, n: number): Promise<Round> {
  const receiver = createReceiver({
    sources,
    inbox: noopInbox,
    transport: { publish: async () => {} },
    tracer: TRACERS[variant],
  });
  const requests = Array.from({ length: n }, signed);
  collect();
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        const res = await receiver.fetch(requests[next++]!);
        if (res.status !== 202) throw new Error(`answered ${res.status}`);
      }
    }),
  );
  return result(n, started, cpu);
}

/** Deliveries per second: publish `n`, run a worker until every record is completed. */
async function consumeRound(variant: Variant, n: number, round: string): Promise<Round> {
  const store = createMemoryStore();
  const transport = createMemoryTransport({ queue: `bench-${variant}-${round}` });
  let done = 0;
  let finished: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const worker = createWorker({
    transport,
    records: store,
    tracer: TRACERS[variant],
    concurrency: 16,
    handlers: [
      defineHandler({
        type: 'order.paid',
        handle: async () => {
          if (++done === n) finished();
        },
      }),
    ],
  });
  const envelopes = Array.from({ length: n }, (_, i) =>
    createEnvelope({ id: `evt_${round}_${i}`, source: 'svc', type: 'order.paid', payload: { i } }),
  );
  await transport.publish(envelopes.map((envelope) => ({ envelope })));
  collect();
  const started = performance.now();
  const cpu = process.cpuUsage();
  await worker.start();
  await all;
  const measured = result(n, started, cpu);
  await worker.close();
  await transport.close();
  return measured;
}

interface Round {
  /** Operations per second of wall time. */
  readonly rate: number;
  /** CPU time (this process, user + system) per operation, in µs: moved least by other work. */
  readonly cpuUs: number;
}

function result(n: number, started: number, cpu: NodeJS.CpuUsage): Round {
  const used = process.cpuUsage(cpu);
  return { rate: n / ((performance.now() - started) / 1000), cpuUs: (used.user + used.system) / n };
}

/** A full collection before each round (with --expose-gc), so no round pays for the last one's garbage. */
const collect = () => (globalThis as { gc?: () => void }).gc?.();

/**
 * The tracing call sites alone, in a tight loop: a receipt with its verify, claim and send
 * spans, and a delivery's process, handle and settle spans, with the off and the no-op tracer. The difference per operation is
 * what the default costs, stable where whole-pipeline rounds swing with the machine's load.
 */
async function callSites(): Promise<void> {
  const envelope = createEnvelope({ id: 'evt_1', source: 'svc', type: 'order.paid', payload: {} });
  const delivery = { envelope, attempt: 1 } as Delivery;
  const publisher = { name: 'memory', destination: 'q', publish: async () => {} };
  const messages = [{ envelope }];
  const headers = { 'content-type': 'application/json' };
  const reply = { status: 202, outcome: 'accepted' };
  const verified = [{ eventId: 'evt_1', type: 'order.paid' }];
  const kept: Record<string, string> = {};
  const claim = async () => ({ status: 'new', token: 't' }) as const;
  const handled = async () => {};
  const verdict = { action: 'ack', why: 'processed' } as const;
  const receipt = (tracer: Tracer) => () =>
    traceReceipt(tracer, 'svc', headers, async (span) => {
      traceVerify(tracer, span, 'svc', () => verified);
      injectReceipt(span, kept);
      await traceClaim(tracer, envelope, claim);
      await publishTraced(tracer, publisher, messages);
      return reply;
    });
  const consume = (tracer: Tracer) => {
    const traced = traceDeliveries(tracer, publisher, async (d) => {
      await traceHandler(d, 'order.paid', handled, undefined);
      await traceVerdict(d, verdict, handled, undefined, undefined);
    });
    return () => traced(delivery);
  };
  const N = 200_000;
  const perOpNs = async (op: () => Promise<unknown>) => {
    collect();
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) await op();
    const used = process.cpuUsage(start);
    return ((used.user + used.system) * 1000) / N;
  };
  // Without any call site: the same work, untraced.
  const bare = {
    receive: async () => {
      await claim();
      await publisher.publish();
      return reply;
    },
    consume: async () => {
      await handled();
      await handled();
    },
  };
  for (const [label, make] of [
    ['receive', receipt],
    ['consume', consume],
  ] as const) {
    const none: number[] = [];
    const offs: number[] = [];
    const noops: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      none.push(await perOpNs(bare[label]));
      offs.push(await perOpNs(make(off)));
      noops.push(await perOpNs(make(resolveTracer(undefined))));
    }
    const [n, o, d] = [median(none), median(offs), median(noops)];
    console.log(
      `${label} call sites: untraced ${n.toFixed(0)} ns, off ${o.toFixed(0)} ns, no-op ${d.toFixed(0)} ns per operation: the default tracer costs ${(d - n).toFixed(0)} ns over no tracing code`,
    );
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(
  label: string,
  run: (variant: Variant, round: string) => Promise<Round>,
): Promise<void> {
  for (const v of VARIANTS) await run(v, `warm-${v}`);
  const rounds = new Map<Variant, Round[]>(VARIANTS.map((v) => [v, []]));
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts with the next tracer, so none always runs first.
    const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]!);
    for (const v of order) rounds.get(v)!.push(await run(v, `r${r}`));
  }
  const rate = (v: Variant) => median(rounds.get(v)!.map((x) => x.rate));
  const cpu = (v: Variant) => median(rounds.get(v)!.map((x) => x.cpuUs));
  for (const v of VARIANTS) {
    const figures = `${rate(v).toFixed(0).padStart(7)}/s   ${cpu(v).toFixed(1).padStart(6)} µs CPU each`;
    console.log(`${label} ${v.padEnd(10)} ${figures}`);
  }
  // Ratios of throughput: by wall time, and by CPU time (operations per CPU second).
  const ratio = (a: Variant, b: Variant) =>
    `${(rate(a) / rate(b)).toFixed(3)}× by wall time   ${(cpu(b) / cpu(a)).toFixed(3)}× by CPU`;
  console.log(`${label} no-op / off       ${ratio('no-op', 'off')}`);
  console.log(`${label} recording / off   ${ratio('recording', 'off')}\n`);
}

console.log(
  `tracing bench: node ${process.version}, ${cpus().length} CPUs (load average ${loadavg()[0]!.toFixed(1)}), ` +
    `${ROUNDS} interleaved rounds per tracer after a warm-up round; ${RECEIVES} receives, ${DELIVERIES} deliveries a round.\n`,
);
await measure('receive', (v) => receiveRound(v, RECEIVES));
await measure('consume', (v, round) => consumeRound(v, DELIVERIES, round));
await callSites();
await provider.shutdown();
console.log(`load average at the end: ${loadavg()[0]!.toFixed(1)}`);
