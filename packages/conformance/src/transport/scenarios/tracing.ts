import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  createReceiver,
  createWorker,
  defineHandler,
  redriveDeadLetters,
  standardWebhooks,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { expect } from 'vitest';
import { recordSpans } from '../../tracing.js';
import { waitUntil } from '../../wait.js';
import type { ScenarioGroup } from '../scenario.js';

const SOURCE = 'conformance';
const TYPE = 'test.traced';

/** A Standard Webhooks delivery of one event, signed with `secret`, sent by a traced sender. */
function signedRequest(secret: Buffer, id: string, traceparent: string): Request {
  const body = JSON.stringify({ type: TYPE, timestamp: new Date().toISOString(), data: { id } });
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64');
  return new Request(`http://127.0.0.1/webhooks/${SOURCE}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': ts,
      'webhook-signature': `v1,${signature}`,
      traceparent,
    },
    body,
  });
}

const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const traceOf = (s: ReadableSpan) => s.spanContext().traceId;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const childrenOf = (spans: readonly ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((s) => parentOf(s) === idOf(parent) && traceOf(s) === traceOf(parent));
const only = (spans: readonly ReadableSpan[], what: string): ReadableSpan => {
  expect(spans.length, what).toBe(1);
  return spans[0]!;
};

/**
 * Tracing end to end on this transport: the context travels in the envelope through publish,
 * retries and the dead letter, and a redrive starts a linked trace.
 */
export const tracingScenarios: ScenarioGroup = (caps, t) => [
  {
    name: 'one trace follows a webhook from its receipt through two failed attempts to the dead letter, and its redrive is a new trace linked to it',
    proves: [],
    async run({ fixture }) {
      await using fx = await fixture();
      await using tracing = recordSpans();
      const { tracer } = tracing;
      const store = createMemoryStore();
      const secret = randomBytes(24);
      const senderTrace = randomBytes(16).toString('hex');
      const senderSpan = randomBytes(8).toString('hex');
      const id = `msg_${randomUUID()}`;
      let calls = 0;
      const delayMs = Math.min(t.retryDelayMs, caps.maxDelayMs);
      await using worker = createWorker({
        transport: fx.transport,
        records: store,
        tracer,
        retry: { maxAttempts: 2, baseDelayMs: delayMs, maxDelayMs: delayMs, jitter: 'none' },
        handlers: [
          defineHandler({
            type: TYPE,
            async handle() {
              calls++;
              if (calls <= 2) throw new Error(`handler failure ${calls}`);
            },
          }),
        ],
      });
      await worker.start();
      const receiver = createReceiver({
        sources: {
          [SOURCE]: standardWebhooks({ secrets: [`whsec_${secret.toString('base64')}`] }),
        },
        inbox: store,
        transport: fx.transport,
        tracer,
      });
      const sent = signedRequest(secret, id, `00-${senderTrace}-${senderSpan}-01`);
      expect((await receiver.fetch(sent)).status, 'accepted').toBe(202);

      const waitMs = t.deliveryMs * 4 + delayMs;
      const stateIs = (state: string) =>
        waitUntil(async () => (await store.get(SOURCE, id))?.state === state, {
          timeoutMs: waitMs,
          message: `the event record to reach ${state}`,
        });
      const processSpans = () => tracing.spans().filter((s) => s.name.startsWith('process'));
      await stateIs('dead-lettered');
      await waitUntil(() => processSpans().length === 2, {
        timeoutMs: waitMs,
        message: 'two process spans ended',
      });
      const redriven = await redriveDeadLetters(
        { records: store, transport: fx.transport, tracer },
        { ids: [{ source: SOURCE, id }], actor: 'cli:conformance', apply: true },
      );
      expect(redriven.done).toBe(1);
      await stateIs('completed');
      await waitUntil(() => processSpans().length === 3, {
        timeoutMs: waitMs,
        message: 'the redriven attempt’s process span ended',
      });

      const spans = tracing.spans();
      const system = fx.transport.name === 'sqs' ? 'aws_sqs' : fx.transport.name;
      // The receipt: a SERVER span under the sender's, with verify, claim and send under it.
      const receipt = only(
        spans.filter((s) => s.name === `receive ${SOURCE}`),
        'one receipt span',
      );
      expect(receipt.kind).toBe(SpanKind.SERVER);
      expect(traceOf(receipt), 'the receipt continues the sender’s trace').toBe(senderTrace);
      expect(parentOf(receipt)).toBe(senderSpan);
      expect(receipt.attributes['http.response.status_code']).toBe(202);
      const steps = childrenOf(spans, receipt);
      expect(steps.map((s) => s.name.split(' ')[0]).sort()).toEqual(['claim', 'send', 'verify']);
      const send = only(
        steps.filter((s) => s.name.startsWith('send')),
        'one send span',
      );
      expect(send.kind).toBe(SpanKind.PRODUCER);
      expect(send.attributes).toMatchObject({
        'messaging.system': system,
        'messaging.operation.type': 'send',
        'messaging.message.id': id,
      });
      if (fx.transport.destination !== undefined) {
        expect(send.attributes['messaging.destination.name']).toBe(fx.transport.destination);
      }
      const record = await store.get(SOURCE, id);
      expect(record?.traceId, 'the event record keeps the trace id').toBe(senderTrace);

      // Two failed attempts in the same trace, each the send span's child and linked to it.
      const attemptOf = (s: ReadableSpan) => Number(s.attributes['onceflow.delivery.attempt']);
      const attempts = processSpans()
        .filter((s) => traceOf(s) === senderTrace)
        .sort((a, b) => attemptOf(a) - attemptOf(b));
      expect(attempts.length, 'two attempts in the receipt’s trace').toBe(2);
      for (const [i, attempt] of attempts.entries()) {
        expect(attempt.kind).toBe(SpanKind.CONSUMER);
        expect(parentOf(attempt), 'an attempt is the send span’s child').toBe(idOf(send));
        expect(attempt.links.map((l) => l.context.spanId)).toContain(idOf(send));
        expect(attempt.attributes).toMatchObject({
          'messaging.system': system,
          'messaging.operation.type': 'process',
          'messaging.message.id': id,
          'onceflow.event.source': SOURCE,
          'onceflow.event.type': TYPE,
          'onceflow.delivery.attempt': i + 1,
        });
        expect(attempt.status.code).toBe(SpanStatusCode.ERROR);
        const inside = childrenOf(spans, attempt);
        const handled = only(
          inside.filter((s) => s.name === `handle ${TYPE}`),
          'one handle span',
        );
        expect(handled.events.map((e) => e.name)).toContain('exception');
        const settled = only(
          inside.filter((s) => s.attributes['messaging.operation.type'] === 'settle'),
          'one settle span',
        );
        expect(settled.attributes['messaging.operation.name']).toBe(i === 0 ? 'retry' : 'ack');
      }
      const deadLetter = attempts[1]!.events.find((e) => e.name === 'onceflow.dead_letter');
      expect(deadLetter?.attributes?.['onceflow.dead_letter.reason']).toBeTypeOf('string');
      expect(attempts[1]!.attributes['onceflow.outcome']).toBe('dead-letter');

      // The redrive: a new trace, linked to the original, whose attempt is processed.
      const redrive = only(
        spans.filter((s) => s.name === `redrive ${SOURCE}`),
        'one redrive span',
      );
      expect(traceOf(redrive)).not.toBe(senderTrace);
      expect(parentOf(redrive), 'the redrive starts a trace').toBeUndefined();
      expect(redrive.links.map((l) => l.context.traceId)).toContain(senderTrace);
      const redone = only(
        processSpans().filter((s) => traceOf(s) !== senderTrace),
        'one attempt outside the receipt’s trace',
      );
      expect(traceOf(redone), 'the redriven attempt is in the redrive’s trace').toBe(
        traceOf(redrive),
      );
      expect(redone.links.map((l) => l.context.traceId)).toContain(senderTrace);
      expect(redone.attributes['onceflow.delivery.attempt']).toBe(1);
      expect(redone.attributes['onceflow.outcome']).toBe('processed');
      expect(redone.status.code).not.toBe(SpanStatusCode.ERROR);
    },
  },
];
