import type { Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import { hostname } from 'node:os';
import type { Inbox, InboxOutcomes } from '../contracts/inbox.js';
import type { RecordStore } from '../contracts/records.js';
import type { Transport } from '../contracts/transport.js';
import { assertClaimCheckStore } from '../claim-check/mode.js';
import { ConfigError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { resolveTracer } from '../observability/tracing.js';
import type { EventHandler } from './handler.js';
import { type OutcomeInbox, outcomeInbox } from './inbox-outcome.js';
import type { HandlerMiddleware } from './middleware.js';
import type { RetryPolicy } from './retry-policy.js';

/** Everything `createWorker` takes. Only `transport`, `records` and `handlers` are required. */
export interface WorkerConfig {
  /**
   * Where deliveries come from. The worker calls its `start()` where it has one (`TopologySetup`)
   * and closes only its own subscriptions: whoever created the transport closes it, after
   * `worker.close()`. Its `capabilities.lock.ms` is the processing lease too.
   */
  readonly transport: Transport;
  /**
   * The event record (usually the inbox store, which implements it): the processed-guard, the
   * attempts, the last error and the dead letters. Never closed by the worker: its creator closes
   * it (or its pool), after `worker.close()`.
   */
  readonly records: RecordStore;
  /**
   * The receiver's inbox, when it is another store than `records` (a Redis inbox with PostgreSQL
   * `records`, so a handler's ledger and the processed mark share a transaction): before each
   * ack the worker marks the event processed there (`InboxOutcomes.markProcessed`), so the
   * inbox's stats, the backlog gauges and its retention see what the record sees. Leave it out
   * when the receiver's inbox is `records` (the usual shape); giving `records` itself changes
   * nothing. Refused with `ConfigError`: an inbox without `InboxOutcomes`, or one given with
   * `claimCheck` (the worker loads references from `records`, so both must be one store).
   * Never closed by the worker. Default none.
   */
  readonly inbox?: (Inbox & InboxOutcomes) | undefined;
  /**
   * The handlers (`defineHandler`), each chosen by its `type` pattern, `[source:]type`
   * (`invoice.paid`, `stripe:invoice.*`, `*:payment.*`): an exact type beats a wildcard, more
   * literal segments beat fewer, a named source beats `*`. Two equally specific patterns that one
   * event could match both are a `ConfigError` at `createWorker` (see docs/routing-tenants-cloudevents.md).
   */
  readonly handlers: readonly EventHandler[];
  /**
   * Your own steps around every handler (timeout, tracing, timing), the first outermost. They run
   * after the processed-guard, the attempts gate and the heartbeat, right around the handler, and
   * only when it is about to run; their outcome is the handler's (see `HandlerMiddleware`).
   * Default none.
   */
  readonly middleware?: readonly HandlerMiddleware[] | undefined;
  /** Retry policy: exponential backoff with full jitter. */
  readonly retry?: Partial<RetryPolicy> | undefined;
  /** Most handler calls in flight at once (the transport's prefetch). Default 8. */
  readonly concurrency?: number | undefined;
  /**
   * How often the locks of a running handler are renewed (the transport lock, where the delivery
   * is a `RenewableDelivery`, and the processing lease, each for the transport's `lock.ms`), in
   * ms, or `false` to never renew them on its own. Default `lock.ms / 3`; must be below `lock.ms`.
   */
  readonly heartbeatMs?: number | false | undefined;
  /**
   * On `close()`, how long in-flight handlers may keep running before their `ctx.signal` is
   * aborted, in ms. `close()` then still waits for them to return; nothing unfinished is acked.
   * Default 30 000.
   */
  readonly shutdownTimeoutMs?: number | undefined;
  /**
   * This worker's name in the event record (`consumer`, and the actor of its history entries).
   * Default `<hostname>:<pid>`.
   */
  readonly consumer?: string | undefined;
  /**
   * Where the transport has its own dead-letter destination (`BrokerDeadLetters`: messages past
   * its `deliveryLimit`), record each one there as a dead letter and ack it, so it is listed and
   * redriven like the worker's own. Default true.
   */
  readonly brokerDeadLetters?: boolean | undefined;
  /**
   * Claim-check mode: `true` handles the claim-check references a receiver with `claimCheck`
   * publishes, loading each event from `records` (`records.get`), its payload checked against the
   * reference's hash; a reference with no stored payload (purged, another store) or other bytes
   * is dead-lettered at once with the reason. Needs a store that keeps claimed envelopes (the
   * embedded or PostgreSQL store): any other is refused at `createWorker` with a `UsageError`.
   * Default false: a reference is then dead-lettered (with the stored envelope, ready for a
   * redrive) rather than handled without its payload.
   */
  readonly claimCheck?: boolean | undefined;
  /** An event whose type has no handler: `dead-letter` (default) or `ack` (dropped, logged). */
  readonly unknownType?: 'dead-letter' | 'ack' | undefined;
  /** Gets one line per outcome. Default: silent. */
  readonly logger?: Logger | undefined;
  /** processed, retries, deadLettered, handlerDuration, duplicatesSuppressed{layer:'worker'}. */
  readonly metrics?: OnceflowMetrics | undefined;
  /**
   * OpenTelemetry tracer for the `process`, `handle` and settle spans of each delivery attempt.
   * Default: the global API's (`trace.getTracer('@onceflow/core')`), a no-op until an SDK is registered.
   */
  readonly tracer?: Tracer | undefined;
  /** Clock in ms (for durations and lock bookkeeping). Default `Date.now`. For tests. */
  readonly now?: (() => number) | undefined;
  /** Uniform [0, 1) source for jitter. Default `Math.random`. For tests. */
  readonly random?: (() => number) | undefined;
}

const isFn = (v: unknown) => typeof v === 'function';
const hasMethods =
  (...names: string[]) =>
  (v: unknown) =>
    typeof v === 'object' &&
    v !== null &&
    names.every((n) => isFn((v as Record<string, unknown>)[n]));
const fnOr = (fallback: () => number) =>
  z
    .custom<() => number>(isFn, 'must be a function')
    .optional()
    .transform((f) => f ?? fallback);
const ms = z.number().int().nonnegative();

const schema = z
  .object({
    transport: z.custom<Transport>(
      (v) =>
        hasMethods('publish', 'consume')(v) && typeof (v as Transport).capabilities === 'object',
      'must be a Transport',
    ),
    records: z.custom<RecordStore>(
      hasMethods('begin', 'extend', 'complete', 'release', 'scheduleRetry', 'deadLetter'),
      'must be a RecordStore',
    ),
    inbox: z
      .custom<OutcomeInbox>((v) => typeof v === 'object' && v !== null, 'must be an Inbox')
      .optional(),
    handlers: z
      .array(
        z.custom<EventHandler>(
          (v) => hasMethods('handle')(v) && typeof (v as EventHandler).type === 'string',
          'must be a handler from defineHandler',
        ),
      )
      .min(1),
    middleware: z
      .array(z.custom<HandlerMiddleware>(isFn, 'must be a function (next) => step'))
      .default([]),
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).default(8),
        baseDelayMs: ms.default(1_000),
        maxDelayMs: ms.default(300_000),
        jitter: z.enum(['full', 'none']).default('full'),
      })
      .prefault({}),
    concurrency: z.number().int().min(1).default(8),
    heartbeatMs: z.union([z.number().int().min(1), z.literal(false)]).optional(),
    shutdownTimeoutMs: ms.default(30_000),
    consumer: z.string().min(1).default(`${hostname()}:${process.pid}`),
    brokerDeadLetters: z.boolean().default(true),
    claimCheck: z.boolean().default(false),
    unknownType: z.enum(['dead-letter', 'ack']).default('dead-letter'),
    logger: z
      .custom<Logger>(
        hasMethods('child', 'info', 'warn', 'error'),
        'must be a Logger (pino or your own)',
      )
      .optional()
      .transform((l) => l ?? silentLogger),
    metrics: z
      .custom<OnceflowMetrics>(
        (v) => typeof v === 'object' && v !== null && 'processed' in v && 'deadLettered' in v,
        'must be an OnceflowMetrics (createMetrics() or your own)',
      )
      .optional(),
    tracer: z
      .custom<Tracer>((v) => hasMethods('startSpan')(v), 'must be an OpenTelemetry Tracer')
      .optional()
      .transform(resolveTracer),
    now: fnOr(Date.now),
    random: fnOr(Math.random),
  })
  .transform((c) => {
    const lockMs = c.transport.capabilities.lock.ms;
    return { ...c, lockMs, heartbeatMs: c.heartbeatMs ?? Math.max(1, Math.floor(lockMs / 3)) };
  });

export type ResolvedWorkerConfig = z.output<typeof schema> & {
  /** The inbox to tell of outcomes (`WorkerConfig.inbox` unless it is `records`), if any. */
  readonly outcomes: InboxOutcomes | undefined;
};

/** Validates a config and fills in defaults, in this one place. Throws `ConfigError`. */
export function parseWorkerConfig(input: WorkerConfig): ResolvedWorkerConfig {
  const c = parseConfig('worker config', schema, input);
  const problems: string[] = [];
  if (c.retry.maxDelayMs < c.retry.baseDelayMs)
    problems.push('retry.maxDelayMs < retry.baseDelayMs');
  if (c.heartbeatMs !== false && c.heartbeatMs >= c.lockMs)
    problems.push(`heartbeatMs must be below the transport's lock.ms (${c.lockMs})`);
  const limit = c.transport.capabilities.deliveryLimit;
  if (limit !== false && limit <= c.retry.maxAttempts) {
    // The broker would move a failing event to its own dead-letter queue before the worker
    // decided, and every retry would count against the broker's limit first.
    problems.push(
      `retry.maxAttempts (${c.retry.maxAttempts}) must be below the ${c.transport.name} transport's deliveryLimit (${limit})`,
    );
  }
  const outcomes = outcomeInbox(c.inbox, c.records, c.claimCheck);
  if (c.claimCheck) assertClaimCheckStore('worker config', c.records);
  if (problems.length > 0) throw new ConfigError(`invalid worker config: ${problems.join('; ')}`);
  return { ...c, outcomes };
}
