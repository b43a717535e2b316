import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A value for each label name, on every call. */
export type MetricLabels<L extends string> = Readonly<Record<L, string>>;

/** Counts events: each `inc` adds one. prom-client's `Counter` fits. */
export interface MetricCounter<L extends string> {
  inc(labels: MetricLabels<L>): void;
}

/** Records a distribution of values (seconds, in onceflow's). prom-client's `Histogram` fits. */
export interface MetricHistogram<L extends string> {
  observe(labels: MetricLabels<L>, value: number): void;
}

/** Holds the last value set. Unlabelled gauges get `{}` as labels. prom-client's `Gauge` fits. */
export interface MetricGauge<L extends string> {
  set(labels: MetricLabels<L>, value: number): void;
}

/**
 * The metrics port: what the receiver, worker, relay and store monitor record. `createMetrics()`
 * is the prom-client implementation; any object of these instruments works (OpenTelemetry,
 * StatsD, plain counters in a test). Instruments are called on the hot path and must not throw
 * or block.
 *
 * Alert on: `oldestUnprocessedAge` (work stuck), `events` in state `dead-lettered` (> 0), the
 * rate of `payloadConflicts` (> 0: a sender reused an id with other bytes), `receiptLag` (sender →
 * receiver delay), `unavailable` outcomes (503s) in `webhooksReceived`, a growing `consumerLag`.
 * The repository's `ops/prometheus/alerts.yml` has these as Prometheus rules.
 */
export interface OnceflowMetrics {
  /** Requests answered, by source and outcome: a `ReceiveOutcome` (`accepted`, `duplicate`, `unauthorized`, `too-large`, `method-not-allowed`, `timeout`, `overloaded`, …), as in the receiver's status table. */
  readonly webhooksReceived: MetricCounter<'source' | 'outcome'>;
  /** Seconds from the sender's `occurredAt` to receipt. */
  readonly receiptLag: MetricHistogram<'source'>;
  /** Seconds spent answering a webhook. */
  readonly receiveDuration: MetricHistogram<'source' | 'outcome'>;
  /** Duplicates that caused no work: `inbox` at the receiver, `worker` at the processed-guard. */
  readonly duplicatesSuppressed: MetricCounter<'source' | 'layer'>;
  /** Same event id received with another payload hash. */
  readonly payloadConflicts: MetricCounter<'source'>;
  /** Events handled successfully. */
  readonly processed: MetricCounter<'type'>;
  /** Deliveries scheduled for retry, by the error code or reason (`BUSY`, `SHUTDOWN`). */
  readonly retries: MetricCounter<'type' | 'code'>;
  readonly deadLettered: MetricCounter<'type' | 'code'>;
  /** Seconds the handler ran, by outcome. */
  readonly handlerDuration: MetricHistogram<'type' | 'outcome'>;
  /** Stale inbox claims published by the relay. */
  readonly relayRepublished: MetricCounter<'source'>;
  /** Events in the event record, by `state` (set by `createStoreMonitor`). */
  readonly events: MetricGauge<'state'>;
  /** Seconds since the oldest accepted event not yet processed (set by `createStoreMonitor`). */
  readonly oldestUnprocessedAge: MetricGauge<never>;
  /** Inbox claims not yet enqueued (set by `createStoreMonitor`). */
  readonly inboxPending: MetricGauge<never>;
  /** Outbox rows published and confirmed by the broker, by source (the outbox dispatcher). */
  readonly outboxPublished: MetricCounter<'source'>;
  /** Outbox rows not yet sent (set by the outbox dispatcher). */
  readonly outboxDepth: MetricGauge<never>;
  /** Seconds since the oldest unsent outbox row was added (set by the outbox dispatcher). */
  readonly outboxOldestUnsentAge: MetricGauge<never>;
  /**
   * Messages the broker holds on a transport's work queue, by `state`: `ready`, `delayed`,
   * `in-flight` (set by `createBacklogMonitor`; a state the broker cannot tell is not set).
   */
  readonly brokerMessages: MetricGauge<'transport' | 'queue' | 'state'>;
  /** Kafka: the consumer group's lag per partition (set by `createBacklogMonitor`). */
  readonly consumerLag: MetricGauge<'transport' | 'queue' | 'partition'>;
}

/**
 * `createMetrics()`'s metrics: prom-client instruments on one registry, so their values can be
 * read (`await metrics.processed.get()`) and served (`registry.metrics()` on /metrics).
 */
export interface PrometheusMetrics extends OnceflowMetrics {
  readonly registry: Registry;
  readonly webhooksReceived: Counter<'source' | 'outcome'>;
  readonly receiptLag: Histogram<'source'>;
  readonly receiveDuration: Histogram<'source' | 'outcome'>;
  readonly duplicatesSuppressed: Counter<'source' | 'layer'>;
  readonly payloadConflicts: Counter<'source'>;
  readonly processed: Counter<'type'>;
  readonly retries: Counter<'type' | 'code'>;
  readonly deadLettered: Counter<'type' | 'code'>;
  readonly handlerDuration: Histogram<'type' | 'outcome'>;
  readonly relayRepublished: Counter<'source'>;
  readonly events: Gauge<'state'>;
  readonly oldestUnprocessedAge: Gauge;
  readonly inboxPending: Gauge;
  readonly outboxPublished: Counter<'source'>;
  readonly outboxDepth: Gauge;
  readonly outboxOldestUnsentAge: Gauge;
  readonly brokerMessages: Gauge<'transport' | 'queue' | 'state'>;
  readonly consumerLag: Gauge<'transport' | 'queue' | 'partition'>;
}

/**
 * The default `OnceflowMetrics`: prom-client instruments named `onceflow_…` (or `prefix`), on
 * `registry` or a new one. Create one per process and pass it to the receiver, worker and relay.
 *
 * @example
 * const metrics = createMetrics();
 * http.createServer(async (_, res) => res.end(await metrics.registry.metrics()));
 */
export function createMetrics(
  options: { registry?: Registry; prefix?: string } = {},
): PrometheusMetrics {
  const registry = options.registry ?? new Registry();
  const p = options.prefix ?? 'onceflow_';
  const registers = [registry];
  const fast = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
  return {
    registry,
    webhooksReceived: new Counter({
      name: `${p}webhooks_received_total`,
      help: 'Webhook requests answered, by outcome',
      labelNames: ['source', 'outcome'],
      registers,
    }),
    receiptLag: new Histogram({
      name: `${p}receipt_lag_seconds`,
      help: 'Seconds from occurredAt to receipt',
      labelNames: ['source'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 86400],
      registers,
    }),
    receiveDuration: new Histogram({
      name: `${p}receive_duration_seconds`,
      help: 'Seconds to answer a webhook',
      labelNames: ['source', 'outcome'],
      buckets: fast,
      registers,
    }),
    duplicatesSuppressed: new Counter({
      name: `${p}duplicates_suppressed_total`,
      help: 'Duplicates that caused no work',
      labelNames: ['source', 'layer'],
      registers,
    }),
    payloadConflicts: new Counter({
      name: `${p}payload_conflicts_total`,
      help: 'Same event id seen with another payload hash',
      labelNames: ['source'],
      registers,
    }),
    processed: new Counter({
      name: `${p}processed_total`,
      help: 'Events handled successfully',
      labelNames: ['type'],
      registers,
    }),
    retries: new Counter({
      name: `${p}retries_total`,
      help: 'Deliveries scheduled for retry',
      labelNames: ['type', 'code'],
      registers,
    }),
    deadLettered: new Counter({
      name: `${p}dead_lettered_total`,
      help: 'Deliveries dead-lettered',
      labelNames: ['type', 'code'],
      registers,
    }),
    handlerDuration: new Histogram({
      name: `${p}handler_duration_seconds`,
      help: 'Handler run time',
      labelNames: ['type', 'outcome'],
      buckets: [...fast, 2.5, 5, 10, 30],
      registers,
    }),
    relayRepublished: new Counter({
      name: `${p}relay_republished_total`,
      help: 'Stale inbox claims published by the relay',
      labelNames: ['source'],
      registers,
    }),
    events: new Gauge({
      name: `${p}events`,
      help: 'Events in the event record, by state',
      labelNames: ['state'],
      registers,
    }),
    oldestUnprocessedAge: new Gauge({
      name: `${p}oldest_unprocessed_age_seconds`,
      help: 'Age of the oldest accepted, unprocessed event',
      registers,
    }),
    inboxPending: new Gauge({
      name: `${p}inbox_pending`,
      help: 'Inbox claims not yet enqueued',
      registers,
    }),
    outboxPublished: new Counter({
      name: `${p}outbox_published_total`,
      help: 'Outbox rows published and confirmed by the broker',
      labelNames: ['source'],
      registers,
    }),
    outboxDepth: new Gauge({
      name: `${p}outbox_depth`,
      help: 'Outbox rows not yet sent',
      registers,
    }),
    outboxOldestUnsentAge: new Gauge({
      name: `${p}outbox_oldest_unsent_age_seconds`,
      help: 'Age of the oldest unsent outbox row',
      registers,
    }),
    brokerMessages: new Gauge({
      name: `${p}broker_messages`,
      help: 'Messages on the work queue, by state (ready, delayed, in-flight), as the broker counts them',
      labelNames: ['transport', 'queue', 'state'],
      registers,
    }),
    consumerLag: new Gauge({
      name: `${p}consumer_lag`,
      help: 'Records after the consumer group committed offset, per partition',
      labelNames: ['transport', 'queue', 'partition'],
      registers,
    }),
  };
}
