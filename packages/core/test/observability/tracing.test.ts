import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/envelope.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { publishInNewTraces, publishTraced } from '../../src/observability/trace-publish.js';
import { TRACE_LINK_HEADER } from '../../src/observability/tracing.js';
import { createReceiver } from '../../src/receiver/index.js';
import { createRelay } from '../../src/relay.js';
import { standardWebhooks } from '../../src/verify/standard-webhooks.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { defineHandler } from '../../src/worker/handler.js';
import { createWorker } from '../../src/worker/worker.js';

const SOURCE = 'svc';
const TYPE = 'thing.happened';
const secret = randomBytes(24);
const sources = { [SOURCE]: standardWebhooks({ secrets: [`whsec_${secret.toString('base64')}`] }) };

function signed(id: string, headers: Record<string, string> = {}): Request {
  const body = JSON.stringify({ type: TYPE, timestamp: new Date().toISOString() });
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64');
  return new Request(`http://127.0.0.1/webhooks/${SOURCE}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': ts,
      'webhook-signature': `v1,${signature}`,
      ...headers,
    },
    body,
  });
}

/** A recording tracer, with the context manager and W3C propagator an SDK's register() installs. */
function recording(): { tracer: Tracer; spans: () => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

afterEach(() => {
  context.disable();
  propagation.disable();
});

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const traceOf = (s: ReadableSpan) => s.spanContext().traceId;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const named = (spans: readonly ReadableSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    name,
  ).toEqual([name]);
  return found[0]!;
};

function pipeline(
  tracer: Tracer | undefined,
  handle: (event: unknown, ctx: HandlerContext) => Promise<void> = async () => {},
) {
  const store = createMemoryStore();
  const transport = createMemoryTransport({ queue: `q-${randomUUID()}` });
  const worker = createWorker({
    transport,
    records: store,
    tracer,
    handlers: [defineHandler({ type: TYPE, handle })],
  });
  const receiver = createReceiver({ sources, inbox: store, transport, tracer });
  return { store, transport, worker, receiver };
}

describe('tracing', () => {
  it('with no SDK registered, a sender’s traceparent passes through to the envelope and the event record unchanged', async () => {
    let seen: string | undefined;
    const { store, worker, receiver } = pipeline(undefined, async (_e, ctx) => {
      seen = ctx.envelope.headers.traceparent;
    });
    await using _ = worker;
    await worker.start();
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const id = `msg_${randomUUID()}`;
    expect((await receiver.fetch(signed(id, { traceparent }))).status).toBe(202);
    const record = await until(async () => {
      const r = await store.get(SOURCE, id);
      return r?.state === 'completed' && r;
    });
    expect(seen).toBe(traceparent);
    expect(record.traceId).toBe(traceparent.split('-')[1]);
  });

  it('without a sender’s traceparent the receipt starts the trace, and the event record keeps its id', async () => {
    const { tracer, spans } = recording();
    const { store, worker, receiver } = pipeline(tracer);
    await using _ = worker;
    await worker.start();
    const id = `msg_${randomUUID()}`;
    expect((await receiver.fetch(signed(id))).status).toBe(202);
    await until(async () => (await store.get(SOURCE, id))?.state === 'completed');
    await until(() => spans().some((s) => s.kind === SpanKind.CONSUMER));
    const receipt = named(spans(), `receive ${SOURCE}`);
    expect(receipt.kind).toBe(SpanKind.SERVER);
    expect(parentOf(receipt)).toBeUndefined();
    expect((await store.get(SOURCE, id))?.traceId).toBe(traceOf(receipt));
  });

  it('under an active HTTP server span the receipt is an INTERNAL child of it', async () => {
    const { tracer, spans } = recording();
    const { receiver } = pipeline(tracer);
    const http = tracer.startSpan('POST /webhooks/:source', { kind: SpanKind.SERVER });
    const res = await context.with(trace.setSpan(context.active(), http), () =>
      receiver.fetch(signed(`msg_${randomUUID()}`)),
    );
    http.end();
    expect(res.status).toBe(202);
    const receipt = named(spans(), `receive ${SOURCE}`);
    expect(receipt.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(receipt)).toBe(http.spanContext().spanId);
  });

  it('the handler runs inside its handle span: spans it starts are children of it, under the process span', async () => {
    const { tracer, spans } = recording();
    const { store, worker, receiver } = pipeline(tracer, async () => {
      tracer.startSpan('charge card').end();
    });
    await using _ = worker;
    await worker.start();
    const id = `msg_${randomUUID()}`;
    await receiver.fetch(signed(id));
    await until(() => spans().some((s) => s.kind === SpanKind.CONSUMER));
    const all = spans();
    const process = all.find((s) => s.kind === SpanKind.CONSUMER)!;
    const handle = named(all, `handle ${TYPE}`);
    const own = named(all, 'charge card');
    expect(parentOf(handle)).toBe(process.spanContext().spanId);
    expect(parentOf(own)).toBe(handle.spanContext().spanId);
    expect(process.attributes['onceflow.outcome']).toBe('processed');
    expect((await store.get(SOURCE, id))?.state).toBe('completed');
  });

  it('a claim the relay publishes is delivered in the trace of its receipt', async () => {
    const { tracer, spans } = recording();
    const store = createMemoryStore();
    const transport = createMemoryTransport({ queue: `q-${randomUUID()}` });
    const worker = createWorker({
      transport,
      records: store,
      tracer,
      handlers: [defineHandler({ type: TYPE, handle: async () => {} })],
    });
    await using _ = worker;
    await worker.start();
    const receiptTrace = randomBytes(16).toString('hex');
    const receiptSpan = randomBytes(8).toString('hex');
    const envelope = createEnvelope({
      id: `evt_${randomUUID()}`,
      source: SOURCE,
      type: TYPE,
      payload: {},
      headers: { traceparent: `00-${receiptTrace}-${receiptSpan}-01` },
    });
    // The receiver claimed it and died before publishing.
    expect((await store.claim(envelope, { leaseMs: 1 })).status).toBe('new');
    await new Promise((r) => setTimeout(r, 10));
    const relay = createRelay({ inbox: store, transport, tracer, olderThanMs: 0 });
    expect(await relay.runOnce()).toBe(1);
    await until(() => spans().some((s) => s.kind === SpanKind.CONSUMER));
    const process = spans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(traceOf(process)).toBe(receiptTrace);
    expect(parentOf(process)).toBe(receiptSpan);
    const send = spans().find((s) => s.name.startsWith('send'))!;
    expect(send.kind).toBe(SpanKind.CLIENT);
    expect(send.links.map((l) => l.context.spanId)).toEqual([receiptSpan]);
  });

  it('a copy published by an untraced process (a replay from the CLI) starts a new trace at its first attempt, linked to the original', async () => {
    const originalTrace = randomBytes(16).toString('hex');
    const original = createEnvelope({
      id: `evt_${randomUUID()}`,
      source: SOURCE,
      type: TYPE,
      payload: {},
      headers: { traceparent: `00-${originalTrace}-${randomBytes(8).toString('hex')}-01` },
    });
    const transport = createMemoryTransport({ queue: `q-${randomUUID()}` });
    // No SDK yet: the publisher records nothing.
    await publishInNewTraces(transport, [{ envelope: original, dedupeKey: 'copy-1' }], {
      operation: 'replay',
    });
    const { tracer, spans } = recording();
    const store = createMemoryStore();
    let headers: Readonly<Record<string, string>> = {};
    const worker = createWorker({
      transport,
      records: store,
      tracer,
      handlers: [
        defineHandler({
          type: TYPE,
          handle: async (_e, ctx) => {
            headers = ctx.envelope.headers;
          },
        }),
      ],
    });
    await using _ = worker;
    await worker.start();
    await until(() => spans().some((s) => s.kind === SpanKind.CONSUMER));
    expect(headers.traceparent).toBeUndefined();
    expect(headers[TRACE_LINK_HEADER]).toBe(original.headers.traceparent);
    const process = spans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(parentOf(process)).toBeUndefined();
    expect(traceOf(process)).not.toBe(originalTrace);
    expect(process.links.map((l) => l.context.traceId)).toEqual([originalTrace]);
  });

  it('a batch publish gives each message a create span as its creation context, and the send span links to each', async () => {
    const { tracer, spans } = recording();
    const transport = createMemoryTransport({ queue: `q-${randomUUID()}` });
    const seen: Record<string, string | undefined> = {};
    const worker = createWorker({
      transport,
      records: createMemoryStore(),
      tracer,
      handlers: [
        defineHandler({
          type: TYPE,
          handle: async (_e, ctx) => {
            seen[ctx.envelope.id] = ctx.envelope.headers.traceparent;
          },
        }),
      ],
    });
    await using _ = worker;
    await worker.start();
    const envelopes = ['a', 'b'].map((id) =>
      createEnvelope({ id, source: SOURCE, type: TYPE, payload: {} }),
    );
    await publishTraced(
      tracer,
      transport,
      envelopes.map((envelope) => ({ envelope })),
    );
    await until(() => spans().filter((s) => s.kind === SpanKind.CONSUMER).length === 2);
    const creates = spans().filter((s) => s.name.startsWith('create'));
    expect(creates.map((s) => s.kind)).toEqual([SpanKind.PRODUCER, SpanKind.PRODUCER]);
    expect(creates.map((s) => s.attributes['messaging.message.id']).sort()).toEqual(['a', 'b']);
    const send = named(spans(), `send ${transport.destination}`);
    expect(send.kind).toBe(SpanKind.CLIENT);
    expect(send.attributes['messaging.batch.message_count']).toBe(2);
    expect(send.links.map((l) => l.context.spanId).sort()).toEqual(
      creates.map((s) => s.spanContext().spanId).sort(),
    );
    for (const create of creates) {
      const id = String(create.attributes['messaging.message.id']);
      expect(seen[id]?.split('-')[2], `${id} carries its create span`).toBe(
        create.spanContext().spanId,
      );
    }
  });

  it('a publish the broker refuses fails its send span and the receipt answers 503 with an error status', async () => {
    const { tracer, spans } = recording();
    const store = createMemoryStore();
    const transport = {
      name: 'memory',
      publish: async () => {
        throw new Error('broker down');
      },
    };
    const receiver = createReceiver({ sources, inbox: store, transport, tracer });
    expect((await receiver.fetch(signed(`msg_${randomUUID()}`))).status).toBe(503);
    const send = named(spans(), 'send');
    expect(send.status.code).toBe(SpanStatusCode.ERROR);
    expect(send.events.map((e) => e.name)).toContain('exception');
    const receipt = named(spans(), `receive ${SOURCE}`);
    expect(receipt.status.code).toBe(SpanStatusCode.ERROR);
    expect(receipt.attributes['onceflow.outcome']).toBe('unavailable');
    expect(parentOf(send)).toBe(receipt.spanContext().spanId);
  });

  it('a trace its sampler drops records nothing and still carries the sender’s context to the handler and the record', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    recording();
    const tracer = provider.getTracer('test');
    let seen: string | undefined;
    let active: string | undefined;
    const { store, worker, receiver } = pipeline(tracer, async (_e, ctx) => {
      seen = ctx.envelope.headers.traceparent;
      active = trace.getActiveSpan()?.spanContext().traceId;
    });
    await using _ = worker;
    await worker.start();
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-00`;
    const id = `msg_${randomUUID()}`;
    expect((await receiver.fetch(signed(id, { traceparent }))).status).toBe(202);
    const record = await until(async () => {
      const r = await store.get(SOURCE, id);
      return r?.state === 'completed' && r;
    });
    expect(record.traceId).toBe(traceId);
    expect(seen).toBe(traceparent);
    expect(active, 'the handler runs in the (unsampled) trace').toBe(traceId);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
