import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The metrics an operator alerts on, as prom-client instruments on one registry. Create one per
 * process and pass it to the receiver, worker and relay; expose `registry.metrics()` on /metrics.
 *
 * Alert on: `onceflow_oldest_unprocessed_age_seconds` (work stuck), `onceflow_dead_letter_depth`
 * (> 0), `rate(onceflow_payload_conflicts_total)` (> 0: a sender reused an id with other bytes),
 * `onceflow_receipt_lag_seconds` (sender → receiver delay), 503s in `onceflow_webhooks_received_total`.
 */
export interface OnceflowMetrics {
  readonly registry: Registry;
  /** Requests answered, by source and outcome (`accepted`, `duplicate`, `conflict`, `unauthorized`, `too-large`, `unavailable`, `in-flight`, `bad-request`, `unknown-source`, `handshake`). */
  readonly webhooksReceived: Counter<'source' | 'outcome'>;
  /** Seconds from the sender's `occurredAt` to receipt. */
  readonly receiptLag: Histogram<'source'>;
  /** Seconds spent answering a webhook. */
  readonly receiveDuration: Histogram<'source' | 'outcome'>;
  /** Duplicates that caused no work: `inbox` at the receiver, `worker` at the processed-guard. */
  readonly duplicatesSuppressed: Counter<'source' | 'layer'>;
  readonly payloadConflicts: Counter<'source'>;
  readonly processed: Counter<'type'>;
  readonly retries: Counter<'type' | 'code'>;
  readonly deadLettered: Counter<'type' | 'code'>;
  readonly handlerDuration: Histogram<'type' | 'outcome'>;
  readonly relayRepublished: Counter<'source'>;
  /** Set by `watchDepth`-style collectors: dead letters stored, per transport. */
  readonly deadLetterDepth: Gauge<'transport'>;
  /** Age of the oldest accepted event not yet processed. */
  readonly oldestUnprocessedAge: Gauge;
  readonly inboxPending: Gauge;
}

/**
 * @example
 * const metrics = createMetrics();
 * http.createServer(async (_, res) => res.end(await metrics.registry.metrics()));
 */
export function createMetrics(
  options: { registry?: Registry; prefix?: string } = {},
): OnceflowMetrics {
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
    deadLetterDepth: new Gauge({
      name: `${p}dead_letter_depth`,
      help: 'Dead letters stored',
      labelNames: ['transport'],
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
  };
}
