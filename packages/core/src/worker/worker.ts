import type { Delivery, Subscription, TopologySetup, Transport } from '../contracts/transport.js';
import { ConfigError } from '../errors.js';
import { applyVerdict, type VerdictDeps } from './apply-verdict.js';
import { attemptsGate } from './attempts-gate.js';
import { parseWorkerConfig, type WorkerConfig } from './config.js';
import { isTraced, traceDeliveries, traceVerdict } from '../observability/trace-delivery.js';
import { heartbeat } from './heartbeat.js';
import type { EventHandler } from './handler.js';
import { receiverInboxHook } from './inbox-outcome.js';
import { planHandler } from './invoke.js';
import { createJob } from './job.js';
import type { LockDeps } from './lock.js';
import { type Attempt, type PipelineSteps, planAttempt } from './pipeline.js';
import { recordGuard } from './record-guard.js';
import { hasBrokerDeadLetters, recordBrokerDeadLetter } from './broker-dead-letters.js';
import { backoffDelay } from './retry-policy.js';
import { claimCheckLoader } from './claim-check.js';
import { loadClaimed, withEnvelope } from '../claim-check/load.js';
import { createRunningJobs } from './running-jobs.js';
import { unknownType } from './unknown-type.js';
import { compileRoutes } from '../routing/router.js';
import { untilAvailable } from './wait-for-broker.js';

/** What a worker is doing right now, for probes (`createProbes`) and shutdown reports. */
export interface WorkerStatus {
  /** `idle` before `start()`, `consuming` once subscribed, then `closing` and `closed`. */
  readonly state: 'idle' | 'starting' | 'consuming' | 'closing' | 'closed';
  /** Deliveries being handled (handler running or settlement being recorded). */
  readonly inFlight: number;
  /**
   * Of those, how many renewed neither their processing lease nor their transport lock for
   * longer than the transport's `lock.ms`: their heartbeat stopped (a handler blocking the event
   * loop, a store that no longer answers), and another consumer may take their event over.
   */
  readonly stalled: number;
}

/**
 * A running set of handlers over one transport. It closes only what it created (its
 * subscription); the transport and the record store stay open for their creator to close.
 */
export interface Worker {
  /**
   * Starts the transport (idempotent) and begins consuming. While the broker is unavailable
   * (`TransportUnavailableError`, `StoreUnavailableError`) it keeps trying with backoff (200 ms
   * doubling up to 5 s, full jitter), logging one warning, and resolves once consuming; `close()`
   * during that wait ends it (this resolves without consuming). Any other failure (a
   * `ConfigError`, a topology mismatch) rejects. Idempotent; rejects once closed.
   */
  start(): Promise<void>;
  /**
   * Graceful shutdown: stops taking deliveries, waits up to `shutdownTimeoutMs` for in-flight
   * handlers, then aborts their `ctx.signal` and waits until each has returned and its delivery
   * is settled. Work that did not finish is retried (released to the broker), never acked.
   * Closes the worker's subscriptions, not the transport or the record store: close those after
   * this resolves. Idempotent; `start()` rejects afterwards.
   */
  close(): Promise<void>;
  /** A snapshot, computed on each call (cheap: no I/O). */
  status(): WorkerStatus;
  /** `close()`, so that `await using worker = createWorker(…)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a worker: record guard → attempts gate → heartbeat → your `middleware` → schema →
 * handler, each delivery settled by one verdict (`verdict.ts`). No I/O until `start()`.
 *
 * Delivery guarantees depend on the transport: at-least-once delivery, effectively-once effects
 * through the event record's processing lease and `ctx.idempotencyKey`; per-key ordering only where the transport
 * declares `orderingPerKey`.
 *
 * @example
 * await using worker = createWorker({ transport, records: store, handlers: [onPayment] });
 * await worker.start();
 * // leaving the scope closes the worker; `transport` and `store` stay open for their creator
 */
export function createWorker(config: WorkerConfig): Worker {
  const cfg = parseWorkerConfig(config);
  const { transport, records, metrics, now, random, logger, consumer } = cfg;
  const handlers = compileRoutes(cfg.handlers);
  const lockDeps: LockDeps = { records, lockMs: cfg.lockMs, now };
  // A store that failed to record an outcome: the broker offers the message again after this.
  const recordRetryMs = Math.min(5_000, transport.capabilities.maxDelayMs);
  const verdictDeps: VerdictDeps = { records, metrics, consumer, now, recordRetryMs };
  const loadReference = claimCheckLoader({
    records,
    enabled: cfg.claimCheck,
    consumer,
    logger,
    metrics,
    retryMs: recordRetryMs,
  });
  const running = createRunningJobs();
  const backoff = (attempt: number) => backoffDelay(attempt, cfg.retry, random);
  const steps: PipelineSteps = {
    route: unknownType(cfg.unknownType),
    guard: recordGuard(records, { leaseMs: cfg.lockMs, consumer }),
    gate: attemptsGate(cfg.retry.maxAttempts),
    heartbeat: heartbeat({ ...lockDeps, intervalMs: cfg.heartbeatMs }),
    policyFor: (job) => ({
      attempt: job.attempt,
      maxAttempts: cfg.retry.maxAttempts,
      backoff,
      maxDelayMs: transport.capabilities.maxDelayMs,
      interruptedByShutdown: job.abortedBy === 'shutdown',
    }),
    settle: (job, verdict) => traceVerdict(job.delivery, verdict, applyVerdict, job, verdictDeps),
    acks: { records, metrics },
    traced: isTraced,
    running,
    now,
  };
  // Planned once per handler here, not per delivery.
  const attempts = new Map<EventHandler, Attempt>(
    cfg.handlers.map((h) => [h, planAttempt(steps, planHandler(h, cfg.middleware, lockDeps))]),
  );
  const unrouted = planAttempt(steps, undefined);

  /** The handler routed for an event (`[source:]type` patterns, compiled once), if any. */
  const handlerFor = (source: string, type: string): EventHandler | undefined =>
    handlers.route(source, type);

  const deliver = (delivery: Delivery): Promise<void> => {
    const handler = handlerFor(delivery.envelope.source, delivery.envelope.type);
    const job = createJob(delivery, handler, logger, now() + cfg.lockMs, cfg.lockMs);
    return ((handler && attempts.get(handler)) ?? unrouted)(job);
  };

  const onDelivery = (received: Delivery): Promise<void> => {
    try {
      const loaded = loadReference(received);
      // Most deliveries are no reference and come back as they are: no promise to wait for.
      if (loaded instanceof Promise) return loaded.then((d) => (d === undefined ? d : deliver(d)));
      return loaded === undefined ? DONE : deliver(loaded);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  // The receiver's inbox beside `records`: marked before each ack; a forgotten one is logged.
  const told = receiverInboxHook({
    records,
    inbox: cfg.inbox,
    outcomes: cfg.outcomes,
    logger,
    retryMs: recordRetryMs,
  });

  const subscriptions: Subscription[] = [];
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let state: WorkerStatus['state'] = 'idle';

  /** One start-up attempt; what it subscribed is closed again if it fails part-way. */
  const subscribeAll = async (): Promise<void> => {
    try {
      if (isTopologySetup(transport)) await transport.start();
      const traced = told(traceDeliveries(cfg.tracer, transport, onDelivery));
      subscriptions.push(await transport.consume(traced, { concurrency: cfg.concurrency }));
      if (cfg.brokerDeadLetters && hasBrokerDeadLetters(transport)) {
        const handler = recordBrokerDeadLetter({
          records,
          consumer,
          logger,
          retryMs: recordRetryMs,
          deliveryLimit: transport.capabilities.deliveryLimit,
        });
        // A reference is recorded with the envelope it names, so the dead letter keeps the payload.
        const loaded = async (d: Delivery) =>
          handler(withEnvelope(d, (await loadClaimed(records, d.envelope)).envelope));
        subscriptions.push(await transport.consumeDeadLetters(told(loaded), { concurrency: 1 }));
      }
    } catch (err) {
      await Promise.all(subscriptions.splice(0).map((sub) => sub.close()));
      throw err;
    }
  };
  const stopping = new AbortController();

  const start = (): Promise<void> => {
    if (closing) return Promise.reject(new ConfigError('worker is closed; create a new one'));
    starting ??= (async () => {
      state = 'starting';
      const what = `worker on ${transport.name}`;
      if (!(await untilAvailable(subscribeAll, { what, logger, signal: stopping.signal }))) return;
      if (!closing) state = 'consuming';
      logger.info(
        { transport: transport.name, types: handlers.patterns, concurrency: cfg.concurrency },
        'worker started',
      );
    })().catch((err: unknown) => {
      starting = undefined;
      if (!closing) state = 'idle';
      throw err;
    });
    return starting;
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      state = 'closing';
      stopping.abort(); // a start waiting for the broker gives up
      await starting?.catch(() => undefined);
      const drained = Promise.all([...subscriptions.map((sub) => sub.close()), running.idle()]);
      if (!(await settlesWithin(drained, cfg.shutdownTimeoutMs))) {
        logger.warn(
          { inFlight: running.size, shutdownTimeoutMs: cfg.shutdownTimeoutMs },
          'shutdown timeout: aborting in-flight handlers',
        );
        running.abortAll(new ShutdownAbort());
      }
      try {
        await drained;
      } finally {
        await running.idle();
        state = 'closed';
        logger.info('worker closed');
      }
    })();
    return closing;
  };

  const status = (): WorkerStatus => ({
    state,
    inFlight: running.size,
    stalled: running.renewedBefore(now() - cfg.lockMs),
  });

  return { start, close, status, [Symbol.asyncDispose]: close };
}

const DONE: Promise<void> = Promise.resolve();

const isTopologySetup = (t: Transport): t is Transport & TopologySetup =>
  typeof (t as Partial<TopologySetup>).start === 'function';

class ShutdownAbort extends Error {
  override name = 'AbortError';
  constructor() {
    super('worker shut down before the handler finished');
  }
}

/** True if `p` settles (either way) within `ms`; never rejects. */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });
}
