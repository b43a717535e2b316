import { describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createReceiver,
  createWorker,
  defineHandler,
  type Logger,
  NonRetryableError,
  stripe,
  TransportUnavailableError,
} from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';
import { waitFor } from '../worker/fixture.js';
import { STRIPE_SECRET, stripeEvent, stripeHeaders } from '../receiver/helpers.js';

type Line = { level: string; msg: string } & Record<string, unknown>;

/** A Logger of our own: every line as one object, a child's bindings merged in as pino does. */
function capture(lines: Line[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (fields: object | string, msg?: string): void => {
      const [f, m] = typeof fields === 'string' ? [{}, fields] : [fields, msg ?? ''];
      lines.push({ level, msg: m, ...bindings, ...f });
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => capture(lines, { ...bindings, ...more }),
  };
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (n: number) => `00-${TRACE_ID}-00f067aa0ba902b${n}-01`;
/** A card number in every payload: no log line may carry it. */
const CARD = '4242424242424242';

describe('log lines about one event', () => {
  it('carry source, id, type, attempt, trace id and error code, never the payload or a signature', async () => {
    const lines: Line[] = [];
    const logger = capture(lines);
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    let brokerDown = false;
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: store,
      transport: {
        publish: async (messages) => {
          if (brokerDown)
            throw new TransportUnavailableError('rabbitmq publish: connection closed');
          await transport.publish(messages);
        },
      },
      logger,
    });
    const signatures: string[] = [];
    const post = async (id: string, n: number) => {
      const body = stripeEvent(id, { data: { object: { id: 'pi_1', card: CARD } } });
      const signed = stripeHeaders(body);
      signatures.push(signed['stripe-signature'] ?? '');
      const headers = { ...signed, traceparent: traceparent(n) };
      const request = new Request('http://localhost/webhooks/stripe', {
        method: 'POST',
        headers,
        body,
      });
      return (await receiver.fetch(request)).status;
    };

    // Retried once, then dead-lettered: two attempts.
    expect(await post('evt_retry_dead', 1)).toBe(202);
    brokerDown = true;
    expect(await post('evt_broker_down', 2)).toBe(503);
    brokerDown = false;
    // Not JSON at all: dead-lettered at once, its bytes in no reason and no line.
    await transport.publish([
      {
        envelope: createEnvelope({
          id: 'evt_not_json',
          source: 'stripe',
          type: 'payment_intent.succeeded',
          payload: new TextEncoder().encode(`card=${CARD}`),
          headers: { traceparent: traceparent(3) },
        }),
      },
    ]);

    let calls = 0;
    const worker = createWorker({
      transport,
      records: store,
      logger,
      retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 5 },
      handlers: [
        defineHandler({
          type: 'payment_intent.succeeded',
          async handle() {
            if (++calls === 1) throw new Error('downstream answered 503');
            throw new NonRetryableError('card declined for good');
          },
        }),
      ],
    });
    await worker.start();
    await waitFor(async () => (await store.count({ state: 'dead-lettered' })) === 2, {
      timeoutMs: 10_000,
      what: 'both events dead-lettered',
    });
    await worker.close();
    await transport.close();

    const about = (id: string) => lines.filter((l) => l.id === id);
    const one = about('evt_retry_dead');
    expect(one.map((l) => l.msg)).toEqual([
      'retry scheduled',
      'dead-lettered: card declined for good',
    ]);
    expect(one[0]).toMatchObject({
      level: 'warn',
      source: 'stripe',
      type: 'payment_intent.succeeded',
      attempt: 1,
      traceId: TRACE_ID,
      code: 'INTERNAL',
    });
    expect(one[1]).toMatchObject({
      level: 'error',
      source: 'stripe',
      attempt: 2,
      traceId: TRACE_ID,
      code: 'NON_RETRYABLE',
    });

    const down = about('evt_broker_down');
    expect(down.map((l) => l.msg)).toEqual(['publish failed; answering 503']);
    expect(down[0]).toMatchObject({
      source: 'stripe',
      type: 'payment_intent.succeeded',
      traceId: TRACE_ID,
      code: 'TRANSPORT_UNAVAILABLE',
    });

    const raw = about('evt_not_json');
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatchObject({ attempt: 1, traceId: TRACE_ID, code: 'SCHEMA' });
    expect((await store.get('stripe', 'evt_not_json'))?.reason).not.toContain('card');

    const everything = JSON.stringify(lines, (_k, v) =>
      v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v,
    );
    expect(everything).not.toContain(CARD);
    expect(everything).not.toContain(STRIPE_SECRET);
    for (const signature of signatures) {
      expect(everything).not.toContain(signature);
      for (const part of signature.split(',')) expect(everything).not.toContain(part.slice(3));
    }
  });
});
