import type { Server } from 'node:http';
import { errorLogFields } from '../observability/event-fields.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import type { Receiver } from '../receiver/index.js';
import type { Worker } from '../worker/worker.js';

/** Something closed at the end of a shutdown: an object with `close()` or a function. */
export type Closable = { close(): unknown } | (() => unknown);

export interface ShutdownOptions {
  /** Drained first: new webhooks are answered 503 with `Retry-After`, in-flight ones finish. */
  readonly receiver?: Pick<Receiver, 'drain' | 'inFlight'> | undefined;
  /** Closed at the same time: stops taking deliveries and lets in-flight ones settle. */
  readonly worker?: Pick<Worker, 'close' | 'status'> | undefined;
  /**
   * HTTP servers, closed once the receiver and the worker are done (until then they keep
   * answering: 503 to webhooks, the probes' failing readiness). Idle keep-alive connections are
   * closed with them; at the deadline, every connection.
   */
  readonly servers?: readonly Server[] | undefined;
  /** Closed last, one after the other in this order: relay, transports, stores, pools. */
  readonly close?: readonly Closable[] | undefined;
  /**
   * How long the whole shutdown may take, in ms. Default 25 000, inside Kubernetes' default
   * `terminationGracePeriodSeconds` of 30. Give the worker a `shutdownTimeoutMs` well below it,
   * so handlers still running are aborted and settle (retried, never acked) before it.
   */
  readonly deadlineMs?: number | undefined;
  /** Gets one line when the shutdown starts and one with its result. Default: silent. */
  readonly logger?: Logger | undefined;
}

/** What a shutdown left behind. Nothing unfinished was acknowledged: senders and brokers retry it. */
export interface ShutdownResult {
  /** What started it: the signal's name, or `shutdown()`. */
  readonly reason: string;
  readonly durationMs: number;
  /** True when the deadline passed before everything had finished and closed. */
  readonly timedOut: boolean;
  /** Webhook requests still being answered when the receiver's drain ended (0 unless timed out). */
  readonly requestsLeft: number;
  /** Deliveries still being handled when the worker's close ended (0 unless timed out). */
  readonly deliveriesLeft: number;
  /** Servers and closables (by `name`, else by position) that failed to close or had not closed by the deadline. */
  readonly notClosed: readonly string[];
}

/** Resolves true when `work` settles within `ms`, false otherwise (work keeps running). */
function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!server.listening) return resolve();
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeIdleConnections();
  });

const nameOf = (c: Closable | Server, fallback: string): string => {
  const name = (c as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' && typeof c !== 'function' ? name : fallback;
};

/**
 * Shuts a process down in order, within `deadlineMs`: the receiver drains and the worker closes
 * (at once), then the servers close, then `close` one by one. Never rejects: what failed or was
 * left is in the result and in one log line (warn when anything was left, else info).
 *
 * @example
 * const result = await shutdown({ receiver, worker, servers: [server], close: [transport, store] });
 * // { reason: 'shutdown()', timedOut: false, requestsLeft: 0, deliveriesLeft: 0, notClosed: [], … }
 */
export async function shutdown(
  options: ShutdownOptions,
  reason = 'shutdown()',
): Promise<ShutdownResult> {
  const logger = options.logger ?? silentLogger;
  const deadlineMs = options.deadlineMs ?? 25_000;
  const started = performance.now();
  const remaining = () => Math.max(0, started + deadlineMs - performance.now());
  const { receiver, worker } = options;
  logger.info({ reason, deadlineMs }, 'shutdown: draining');

  const failed = (what: string) => (err: unknown) => {
    logger.error({ ...errorLogFields(err), what }, `shutdown: ${what} failed`);
  };
  const draining: Promise<unknown>[] = [];
  if (receiver) draining.push(receiver.drain().catch(failed('receiver drain')));
  if (worker) draining.push(worker.close().catch(failed('worker close')));
  let timedOut = !(await within(Promise.all(draining), remaining()));
  const requestsLeft = receiver?.inFlight ?? 0;
  const deliveriesLeft = worker?.status().inFlight ?? 0;

  const notClosed: string[] = [];
  const steps: { name: string; run: () => Promise<unknown> }[] = [
    ...(options.servers ?? []).map((server, i) => ({
      name: `servers[${i}]`,
      run: () => closeServer(server),
    })),
    ...(options.close ?? []).map((c, i) => ({
      name: nameOf(c, `close[${i}]`),
      run: async () => (typeof c === 'function' ? c() : c.close()),
    })),
  ];
  for (const step of steps) {
    let ok = true;
    const run = step.run().catch((err: unknown) => {
      ok = false;
      failed(`close ${step.name}`)(err);
    });
    if (!(await within(run, remaining()))) {
      timedOut = true;
      ok = false;
    }
    if (!ok) notClosed.push(step.name);
  }
  if (timedOut) for (const server of options.servers ?? []) server.closeAllConnections();

  const result: ShutdownResult = {
    reason,
    durationMs: Math.round(performance.now() - started),
    timedOut,
    requestsLeft,
    deliveriesLeft,
    notClosed,
  };
  const clean = !timedOut && notClosed.length === 0;
  if (clean) logger.info({ ...result }, 'shutdown: drained');
  else logger.warn({ ...result }, 'shutdown: deadline passed or a close failed; see what was left');
  return result;
}
