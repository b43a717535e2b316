import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createReceiver,
  createWorker,
  defineHandler,
  silentLogger,
  stripe,
  type Transport,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { testEnvelope } from './envelopes.js';
import { createGate, sleep, waitUntil, within } from './wait.js';

/** One answer of the receiver, as the sender saw it. */
export interface SenderAnswer {
  readonly status: number;
  /** The `Retry-After` header, if any. */
  readonly retryAfter: string | null;
  /** From sending the request to reading the whole answer, in ms. */
  readonly ms: number;
}

/** The answers to one burst of concurrent deliveries, sorted by time. */
export interface SenderBurst {
  readonly answers: readonly SenderAnswer[];
  /** The time by which 99 % of the answers had arrived (nearest rank), in ms. */
  readonly p99Ms: number;
  readonly maxMs: number;
}

const SECRET = 'whsec_conformance';

/** A signed Stripe delivery of a new event, as Stripe sends it. */
function stripeDelivery(url: string): Request {
  const t = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id: `evt_${randomUUID()}`,
    type: 'charge.succeeded',
    created: t,
    data: {},
  });
  const v1 = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
  return new Request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
    body,
  });
}

/**
 * A receiver over `transport` (and a memory inbox) behind a real HTTP server on loopback, for
 * tests of what a sender sees: `burst(n)` sends `n` signed deliveries of new events at once and
 * reports each answer with its time. Close it with `await using`; `transport` stays open.
 *
 * @example
 * await using http = await startReceiverServer(transport);
 * const { answers, p99Ms } = await http.burst(32);
 */
export async function startReceiverServer(
  transport: Pick<Transport, 'publish'>,
): Promise<{ burst(n: number): Promise<SenderBurst> } & AsyncDisposable> {
  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [SECRET] }) },
    inbox: createMemoryStore(),
    transport,
  });
  const server = createServer(receiver.nodeHandler());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;

  const one = async (): Promise<SenderAnswer> => {
    const started = performance.now();
    const res = await fetch(stripeDelivery(url));
    await res.arrayBuffer();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      ms: performance.now() - started,
    };
  };

  return {
    async burst(n) {
      const answers = (await Promise.all(Array.from({ length: n }, one))).sort(
        (a, b) => a.ms - b.ms,
      );
      const rank = Math.max(0, Math.ceil(0.99 * answers.length) - 1);
      return {
        answers,
        p99Ms: answers[rank]?.ms ?? 0,
        maxMs: answers.at(-1)?.ms ?? 0,
      };
    },
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What `workerWaitsForBroker` saw. */
export interface WorkerWait {
  /** Whether `start()` was still waiting when the broker came back (it did not reject). */
  readonly waitedForBroker: boolean;
  /** Warnings the worker logged while it waited (one is expected, not one per try). */
  readonly warnings: number;
  /** From the broker's start to the event handled, in ms. */
  readonly handledAfterMs: number;
}

/**
 * A worker over `transport` is started while its broker is down, `startBroker` brings the broker
 * up after `downMs`, and one event is published: resolves once the worker handled it (it fails
 * the test if `start()` rejected or the event is not handled within `timeoutMs`). Closes the
 * worker; `transport` stays open.
 *
 * @example
 * await server.stop();
 * const seen = await workerWaitsForBroker({ transport, startBroker: () => server.start() });
 */
export async function workerWaitsForBroker(options: {
  readonly transport: Transport;
  readonly startBroker: () => Promise<void>;
  readonly downMs?: number | undefined;
  readonly timeoutMs?: number | undefined;
}): Promise<WorkerWait> {
  const { transport, downMs = 3_000, timeoutMs = 120_000 } = options;
  const event = testEnvelope();
  const handled = createGate();
  let warnings = 0;
  const logger = {
    ...silentLogger,
    warn: () => void warnings++,
    child: () => logger,
  };
  const worker = createWorker({
    transport,
    records: createMemoryStore(),
    logger,
    handlers: [defineHandler({ type: event.type, handle: async () => handled.open() })],
  });
  try {
    let settled: 'resolved' | 'rejected' | undefined;
    const starting = worker.start().then(
      () => {
        settled = 'resolved';
      },
      (err: unknown) => {
        settled = 'rejected';
        throw err;
      },
    );
    starting.catch(() => {});
    await sleep(downMs);
    const waitedForBroker = settled === undefined;
    const t0 = Date.now();
    await options.startBroker();
    await within(starting, timeoutMs, 'worker.start() once the broker is back');
    await waitUntil(
      () =>
        transport.publish([{ envelope: event }]).then(
          () => true,
          () => false,
        ),
      { timeoutMs, message: 'a publish accepted once the broker is back' },
    );
    await within(handled.opened, timeoutMs, 'the event handled by the worker that waited');
    return { waitedForBroker, warnings, handledAfterMs: Date.now() - t0 };
  } finally {
    await worker.close();
  }
}
