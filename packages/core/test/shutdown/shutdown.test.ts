import { describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createReceiver,
  createWorker,
  defineHandler,
  type Inbox,
  type Logger,
  shutdown,
  stripe,
} from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';
import { listen, postStripe, STRIPE_SECRET, stripeEvent, until } from '../receiver/helpers.js';

/** A promise and its resolver. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A Logger of our own that keeps every line. */
function capture(): {
  logger: Logger;
  lines: { level: string; msg: string; [k: string]: unknown }[];
} {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const at =
    (level: string) =>
    (fields: object | string, msg?: string): void => {
      if (typeof fields === 'string') lines.push({ level, msg: fields });
      else lines.push({ level, msg: msg ?? '', ...fields });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, lines };
}

describe('shutdown', () => {
  it('drains: new webhooks get 503 with Retry-After, in-flight requests and deliveries finish, then everything closes', async () => {
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    const slowClaim = gate();
    let claims = 0;
    // The first claim waits, so a request is in flight when the shutdown starts.
    const inbox: Inbox = {
      ...store,
      claim: async (envelope, options) => {
        if (++claims === 1) await slowClaim.opened;
        return store.claim(envelope, options);
      },
    };
    const receiver = createReceiver({
      sources: { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
      inbox,
      transport,
      retryAfterSec: 7,
    });
    const handlerGate = gate();
    const handled: string[] = [];
    const worker = createWorker({
      transport,
      records: store,
      handlers: [
        defineHandler({
          type: 'slow',
          async handle(_event, ctx) {
            await handlerGate.opened;
            handled.push(ctx.envelope.id);
          },
        }),
      ],
    });
    await worker.start();
    await transport.publish([
      { envelope: createEnvelope({ id: 'evt_slow', source: 'test', type: 'slow', payload: {} }) },
    ]);
    await until(() => worker.status().inFlight === 1, 10_000);

    const http = await listen(receiver.nodeHandler());
    const inFlight = postStripe(`${http.url}/webhooks/stripe`, stripeEvent('evt_in_flight'));
    await until(() => receiver.inFlight === 1, 10_000);

    const { logger, lines } = capture();
    const result = shutdown({
      receiver,
      worker,
      servers: [http.server],
      close: [transport],
      deadlineMs: 20_000,
      logger,
    });
    await until(() => receiver.draining);
    const turnedAway = await postStripe(`${http.url}/webhooks/stripe`, stripeEvent('evt_late'));
    expect(turnedAway.status).toBe(503);
    expect(turnedAway.headers.get('retry-after')).toBe('7');
    expect(turnedAway.json).toEqual({ status: 'draining' });
    expect(worker.status().state).toBe('closing');

    slowClaim.open();
    handlerGate.open();
    expect((await inFlight).status).toBe(202);
    expect(await result).toMatchObject({
      reason: 'shutdown()',
      timedOut: false,
      requestsLeft: 0,
      deliveriesLeft: 0,
      notClosed: [],
    });
    expect(handled).toEqual(['evt_slow']);
    expect((await store.get('test', 'evt_slow'))?.state).toBe('completed');
    expect(http.server.listening).toBe(false);
    expect(worker.status().state).toBe('closed');
    await expect(transport.publish([])).rejects.toMatchObject({ code: 'TRANSPORT_UNAVAILABLE' });
    const report = lines.filter((l) => l.msg.startsWith('shutdown: drained'));
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ level: 'info', requestsLeft: 0, deliveriesLeft: 0 });
  });

  it('at the deadline, reports what it left and stops waiting', async () => {
    const store = createMemoryStore();
    const transport = createMemoryTransport();
    const stuck = gate();
    const worker = createWorker({
      transport,
      records: store,
      shutdownTimeoutMs: 60_000,
      handlers: [
        defineHandler({
          type: 'stuck',
          async handle() {
            await stuck.opened; // ignores ctx.signal
          },
        }),
      ],
    });
    await worker.start();
    await transport.publish([
      { envelope: createEnvelope({ id: 'evt_stuck', source: 'test', type: 'stuck', payload: {} }) },
    ]);
    await until(() => worker.status().inFlight === 1, 10_000);

    const { logger, lines } = capture();
    const failing = {
      name: 'pool',
      close: async () => Promise.reject(new Error('pool end failed')),
    };
    const result = await shutdown({ worker, close: [transport, failing], deadlineMs: 400, logger });
    expect(result).toMatchObject({
      timedOut: true,
      requestsLeft: 0,
      deliveriesLeft: 1,
      notClosed: ['memory', 'pool'],
    });
    const report = lines.filter((l) => l.msg.startsWith('shutdown: deadline passed'));
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ level: 'warn', deliveriesLeft: 1, timedOut: true });

    // The stuck delivery was never acked: it settles (retry or ack) only once its handler returns.
    expect((await store.get('test', 'evt_stuck'))?.state).toBe('processing');
    stuck.open();
    await worker.close();
    await transport.close();
  });
});
