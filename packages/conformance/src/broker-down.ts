import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createReceiver,
  createWorker,
  defineHandler,
  type Inbox,
  silentLogger,
  stripe,
  type Transport,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { expect } from 'vitest';
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
  /**
   * Deliveries whose publish failed without reaching for the broker because it was known down
   * (`publishDeadline`'s fail-fast), counted from the receiver's log.
   */
  readonly failedFast: number;
}

const SECRET = 'whsec_conformance';
/** How `publishDeadline` words a publish refused while the broker is known down. */
const FAILED_FAST = /failing fast until a probe succeeds/;

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
 * A receiver over `transport` (and a memory inbox, or `options.inbox`) behind a real HTTP server on loopback, for
 * tests of what a sender sees: `burst(n)` sends `n` signed deliveries of new events at once and
 * reports each answer with its time. Close it with `await using`; `transport` stays open.
 *
 * @example
 * await using http = await startReceiverServer(transport);
 * const { answers, p99Ms } = await http.burst(32);
 */
export async function startReceiverServer(
  transport: Pick<Transport, 'publish'>,
  options: { readonly inbox?: Inbox | undefined } = {},
): Promise<{ burst(n: number): Promise<SenderBurst> } & AsyncDisposable> {
  let failedFast = 0;
  const logger = {
    ...silentLogger,
    error: (fields: object | string, _message?: string) => {
      const { err } = (typeof fields === 'object' ? fields : {}) as { err?: unknown };
      if (err instanceof Error && FAILED_FAST.test(err.message)) failedFast++;
    },
    child: () => logger,
  };
  const receiver = createReceiver({
    sources: { stripe: stripe({ secrets: [SECRET] }) },
    inbox: options.inbox ?? createMemoryStore(),
    transport,
    logger,
  });
  const server = createServer(receiver.nodeHandler());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;

  const one = async (): Promise<SenderAnswer> => {
    const started = performance.now();
    const res = await fetch(stripeDelivery(url), { signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      ms: performance.now() - started,
    };
  };

  return {
    async burst(n) {
      failedFast = 0;
      const answers = (await Promise.all(Array.from({ length: n }, one))).sort(
        (a, b) => a.ms - b.ms,
      );
      const rank = Math.max(0, Math.ceil(0.99 * answers.length) - 1);
      return {
        answers,
        p99Ms: answers[rank]?.ms ?? 0,
        maxMs: answers.at(-1)?.ms ?? 0,
        failedFast,
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

/** Options of `expectAnswersWhileBrokerDown`. */
export interface BrokerDownOptions {
  /** A started transport over the broker that `down` takes away; closed at the end. */
  readonly transport: Transport & { close(): Promise<void> };
  /** The transport's `publishTimeoutMs`. */
  readonly publishTimeoutMs: number;
  /** Makes the broker unreachable (stop, kill, SIGSTOP). */
  readonly down: () => unknown;
  /** Brings it back. */
  readonly up: () => unknown;
  /** Names the case in the printed line: `kafka stopped`. */
  readonly label: string;
  /** Concurrent deliveries per burst. Default 32. */
  readonly requests?: number | undefined;
  /** The receiver's inbox. Default a memory store. */
  readonly inbox?: Inbox | undefined;
}

/**
 * The broker-down scenario a sender sees, as assertions: while the broker answers, deliveries get
 * 202; once `down` ran, a burst of concurrent deliveries all get 503 with `Retry-After` within the
 * publish deadline (plus slack for a loaded machine), and in the next burst, with the broker known
 * down, every publish but one probe fails fast, without reaching for the broker; after `up`, 202
 * again. Prints the measured times.
 *
 * @example
 * await expectAnswersWhileBrokerDown({ transport, publishTimeoutMs: 750, label: 'kafka stopped',
 *   down: () => server.stop({ kill: true }), up: () => server.start() });
 */
export async function expectAnswersWhileBrokerDown(options: BrokerDownOptions): Promise<{
  readonly first: SenderBurst;
  readonly known: SenderBurst;
}> {
  const { transport, publishTimeoutMs, requests = 32 } = options;
  await using http = await startReceiverServer(transport, { inbox: options.inbox });
  expect((await http.burst(4)).answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);

  await options.down();
  const first = await http.burst(requests);
  const known = await http.burst(requests);
  const line = (b: SenderBurst) =>
    `503 in ${b.answers[0]?.ms.toFixed(0)}-${b.maxMs.toFixed(0)} ms, p99 ${b.p99Ms.toFixed(0)} ms`;
  console.info(
    `${options.label}, ${requests} concurrent deliveries: first burst ${line(first)}, known down ${line(known)}`,
  );
  for (const a of [...first.answers, ...known.answers]) {
    expect(a.status).toBe(503);
    expect(a.retryAfter).toMatch(/^\d+$/);
  }
  // The deadline decides, not the client's own retries; 2 s of slack for a loaded machine.
  expect(first.maxMs).toBeLessThan(publishTimeoutMs + 2_000);
  // Known down: every publish but at most one probe fails without reaching for the broker.
  expect(known.failedFast).toBeGreaterThanOrEqual(requests - 1);
  expect(known.maxMs).toBeLessThan(publishTimeoutMs + 2_000);

  await options.up();
  await waitUntil(async () => (await http.burst(1)).answers[0]?.status === 202, {
    timeoutMs: 60_000,
    message: 'a delivery accepted again after the broker is back',
  });
  expect((await http.burst(8)).answers.map((a) => a.status)).toEqual(Array(8).fill(202));
  await transport.close();
  return { first, known };
}
