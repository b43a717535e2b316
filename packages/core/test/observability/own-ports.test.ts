import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  createBacklogMonitor,
  createLogger,
  createMetrics,
  createReceiver,
  createStoreMonitor,
  createWorker,
  defineHandler,
  type Logger,
  type MetricLabels,
  type OnceflowMetrics,
  stripe,
} from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';
import { STRIPE_SECRET, stripeEvent, stripeHeaders } from '../receiver/helpers.js';

// pino's logger and prom-client's instruments are implementations of the ports, not the ports.
const pinoLogger: Logger = pino({ level: 'silent' });
const defaultLogger: Logger = createLogger({ level: 'silent' });
const defaultMetrics: OnceflowMetrics = createMetrics();

/** A logger of your own: console-style lines, bindings merged into every line. */
function lineLogger(write: (line: string) => void, bindings: object = {}): Logger {
  const at =
    (level: string) =>
    (fields: object | string, message?: string): void => {
      const [f, msg] = typeof fields === 'string' ? [{}, fields] : [fields, message ?? ''];
      write(`${level} ${msg} ${JSON.stringify({ ...bindings, ...f })}`);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => lineLogger(write, { ...bindings, ...more }),
  };
}

/** Metrics of your own: plain counting functions, no prom-client. */
function countingMetrics() {
  const counts = new Map<string, number>();
  const key = (name: string, labels: MetricLabels<string>) => `${name}${JSON.stringify(labels)}`;
  const add = (k: string, n: number) => counts.set(k, (counts.get(k) ?? 0) + n);
  const counter = (name: string) => ({ inc: (l: MetricLabels<string>) => add(key(name, l), 1) });
  const histogram = (name: string) => ({
    observe: (l: MetricLabels<string>, _v: number) => add(key(`${name}.count`, l), 1),
  });
  const gauge = (name: string) => ({
    set: (l: MetricLabels<string>, v: number) => counts.set(key(name, l), v),
  });
  const metrics: OnceflowMetrics = {
    webhooksReceived: counter('webhooksReceived'),
    receiptLag: histogram('receiptLag'),
    receiveDuration: histogram('receiveDuration'),
    duplicatesSuppressed: counter('duplicatesSuppressed'),
    payloadConflicts: counter('payloadConflicts'),
    processed: counter('processed'),
    retries: counter('retries'),
    deadLettered: counter('deadLettered'),
    handlerDuration: histogram('handlerDuration'),
    relayRepublished: counter('relayRepublished'),
    events: gauge('events'),
    oldestUnprocessedAge: gauge('oldestUnprocessedAge'),
    inboxPending: gauge('inboxPending'),
    brokerMessages: gauge('brokerMessages'),
    consumerLag: gauge('consumerLag'),
    outboxPublished: counter('outboxPublished'),
    outboxDepth: gauge('outboxDepth'),
    outboxOldestUnsentAge: gauge('outboxOldestUnsentAge'),
  };
  const value = (name: string, labels: MetricLabels<string> = {}) => counts.get(key(name, labels));
  return { metrics, value };
}

describe('your own logger and metrics', () => {
  it('pino and prom-client are implementations of the ports', () => {
    for (const log of [pinoLogger, defaultLogger, pinoLogger.child({ a: 1 })]) {
      expect(() => log.info({ n: 1 }, 'typed as Logger')).not.toThrow();
    }
    expect(defaultMetrics.processed).toBeDefined();
  });

  it('a receiver and a worker log and count through them', async () => {
    const lines: string[] = [];
    const logger = lineLogger((line) => lines.push(line));
    const { metrics, value } = countingMetrics();
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox: store,
      transport,
      logger,
      metrics,
    });
    const post = (body: string, headers: Record<string, string>) =>
      receiver.fetch(
        new Request('http://localhost/webhooks/stripe', { method: 'POST', headers, body }),
      );
    const body = stripeEvent('evt_own');
    expect((await post(body, stripeHeaders(body))).status).toBe(202);
    expect((await post(body, stripeHeaders(body, { secret: 'whsec_forged' }))).status).toBe(401);

    expect(value('webhooksReceived', { source: 'stripe', outcome: 'accepted' })).toBe(1);
    expect(value('webhooksReceived', { source: 'stripe', outcome: 'unauthorized' })).toBe(1);
    expect(value('receiveDuration.count', { source: 'stripe', outcome: 'accepted' })).toBe(1);
    expect(value('receiptLag.count', { source: 'stripe' })).toBe(1);
    expect(lines.some((l) => l.startsWith('warn webhook rejected: signature'))).toBe(true);

    let attempts = 0;
    const worker = createWorker({
      transport,
      records: store,
      logger,
      metrics,
      retry: { baseDelayMs: 10, maxDelayMs: 10 },
      handlers: [
        defineHandler({
          type: 'payment_intent.succeeded',
          async handle() {
            if (++attempts === 1) throw new Error('downstream 503');
          },
        }),
      ],
    });
    await worker.start();
    await expect.poll(() => value('processed', { type: 'payment_intent.succeeded' })).toBe(1);
    await worker.close();
    expect(value('retries', { type: 'payment_intent.succeeded', code: 'INTERNAL' })).toBe(1);
    expect(
      value('handlerDuration.count', { type: 'payment_intent.succeeded', outcome: 'processed' }),
    ).toBe(1);
    const processed = lines.find((l) => l.startsWith('info processed '));
    expect(processed).toContain('"id":"evt_own"');

    const monitor = createStoreMonitor({ metrics, inbox: store, records: store });
    expect(await monitor.runOnce()).toBe(2);
    expect(value('inboxPending')).toBe(0);
    expect(value('events', { state: 'completed' })).toBe(1);
    expect(value('events', { state: 'dead-lettered' })).toBe(0);
    await monitor.close();
    const backlog = createBacklogMonitor({ metrics, transports: [transport] });
    expect(await backlog.runOnce()).toBe(1);
    const queue = { transport: 'memory', queue: 'default' };
    expect(value('brokerMessages', { ...queue, state: 'ready' })).toBe(0);
    expect(value('brokerMessages', { ...queue, state: 'in-flight' })).toBe(0);
    await backlog.close();
    await transport.close();
  });
});
