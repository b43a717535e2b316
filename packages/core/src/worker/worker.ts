import type { Delivery, Subscription } from '../contracts/transport.js';
import { ConfigError } from '../errors.js';
import { applyVerdict } from './apply-verdict.js';
import { attemptsGate } from './attempts-gate.js';
import { parseWorkerConfig, type WorkerConfig } from './config.js';
import { heartbeat } from './heartbeat.js';
import { invokeHandler } from './invoke.js';
import { createJob, type Job } from './job.js';
import type { LockDeps } from './lock.js';
import { compose } from './pipeline.js';
import { processedGuard } from './processed-guard.js';
import { backoffDelay } from './retry-policy.js';
import { createRunningJobs } from './running-jobs.js';
import { unknownType } from './unknown-type.js';
import { decideVerdict, type Verdict, type VerdictPolicy } from './verdict.js';

/**
 * A running set of handlers over one transport. It closes only what it created (its
 * subscription); the transport and the processed store stay open for their creator to close.
 */
export interface Worker {
  /** Starts the transport (idempotent) and begins consuming. Idempotent; rejects once closed. */
  start(): Promise<void>;
  /**
   * Graceful shutdown: stops taking deliveries, waits up to `shutdownTimeoutMs` for in-flight
   * handlers, then aborts their `ctx.signal` and waits until each has returned and its delivery
   * is settled. Work that did not finish is retried (released to the broker), never acked.
   * Closes the worker's subscription, not the transport or the processed store: close those after
   * this resolves. Idempotent; `start()` rejects afterwards.
   */
  close(): Promise<void>;
  /** `close()`, so that `await using worker = createWorker(…)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a worker: processed-guard → attempts gate → heartbeat → your `middleware` → schema →
 * handler, each delivery settled by one verdict (`verdict.ts`). No I/O until `start()`.
 *
 * Delivery guarantees depend on the transport: at-least-once delivery, effectively-once effects
 * through the processed-guard and `ctx.idempotencyKey`; per-key ordering only where the transport
 * declares `orderingPerKey`.
 *
 * @example
 * await using worker = createWorker({ transport, processed: inbox, handlers: [onPayment] });
 * await worker.start();
 * // leaving the scope closes the worker; `transport` and `inbox` stay open for their creator
 */
export function createWorker(config: WorkerConfig): Worker {
  const cfg = parseWorkerConfig(config);
  const { transport, processed, metrics, now, random, logger } = cfg;
  const handlers = new Map(cfg.handlers.map((h) => [h.type, h]));
  const lockDeps: LockDeps = { processed, maxLockMs: transport.capabilities.lock.maxMs, now };
  const run = compose(
    [
      unknownType(cfg.unknownType),
      processedGuard(processed, cfg.lockMs),
      attemptsGate(cfg.retry.maxAttempts),
      heartbeat({ ...lockDeps, intervalMs: cfg.heartbeatMs, lockMs: cfg.lockMs }),
    ],
    invokeHandler(lockDeps, cfg.middleware),
  );
  const running = createRunningJobs();
  const policyFor = (job: Job): VerdictPolicy => ({
    attempt: job.attempt,
    maxAttempts: cfg.retry.maxAttempts,
    backoff: (attempt) => backoffDelay(attempt, cfg.retry, random),
    maxDelayMs: transport.capabilities.maxDelayMs,
    interruptedByShutdown: job.abortedBy === 'shutdown',
  });

  async function onDelivery(delivery: Delivery): Promise<void> {
    const handler = handlers.get(delivery.envelope.type);
    const { job, dispose } = createJob(delivery, handler, logger, now() + cfg.lockMs);
    running.add(job);
    try {
      let verdict: Verdict;
      try {
        verdict = decideVerdict({ result: await run(job) }, policyFor(job));
      } catch (error) {
        verdict = decideVerdict({ error }, policyFor(job));
      }
      await applyVerdict(job, verdict, metrics);
    } finally {
      dispose();
      running.delete(job);
    }
  }

  let subscription: Subscription | undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;

  const start = (): Promise<void> => {
    if (closing) return Promise.reject(new ConfigError('worker is closed; create a new one'));
    starting ??= (async () => {
      await transport.start();
      subscription = await transport.consume(onDelivery, {
        concurrency: cfg.concurrency,
        lockMs: cfg.lockMs,
      });
      logger.info(
        { transport: transport.name, types: [...handlers.keys()], concurrency: cfg.concurrency },
        'worker started',
      );
    })().catch((err: unknown) => {
      starting = undefined;
      throw err;
    });
    return starting;
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      await starting?.catch(() => undefined);
      const drained = Promise.all([subscription?.close(), running.idle()]);
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
        logger.info('worker closed');
      }
    })();
    return closing;
  };

  return { start, close, [Symbol.asyncDispose]: close };
}

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
