import type { Envelope } from '../envelope.js';
import type { ErrorInfo } from '../errors.js';

/**
 * What an adapter promises beyond the contract's minimum. The worker and the conformance suite
 * read these; the suite tests every declared capability and, for every undeclared one, the
 * fallback (e.g. no broker dedupe → the worker's record guard must still make effects happen once).
 */
export interface TransportCapabilities {
  /**
   * Broker-side dedupe on `dedupeKey`: how long the broker remembers a key (`Infinity` for as
   * long as the message is kept), or `false` when a re-publish of the same key is delivered again.
   */
  readonly brokerDedupe: { readonly windowMs: number } | false;
  /** Deliveries with the same envelope `key` are handed to handlers one at a time, in publish order. */
  readonly orderingPerKey: boolean;
  /**
   * How a lock is lost. `message`: each delivery has its own lock (visibility timeout, lease, job
   * lock) that expires `ms` after delivery unless renewed (SQS, BullMQ, embedded). `consumer`:
   * deliveries return when the consumer holding them dies or loses its session (RabbitMQ channel
   * loss, Kafka rebalance); `ms` is then only the worker's processing lease. The length is the
   * transport's configuration (`lockMs`), fixed per queue as brokers fix it (JetStream's
   * `ack_wait`, an SQS queue's visibility timeout); a `RenewableDelivery` renews it for `ms` again.
   */
  readonly lock: { readonly scope: 'message' | 'consumer'; readonly ms: number };
  /** The longest `retry({ delayMs })` the transport schedules without delivering early. */
  readonly maxDelayMs: number;
  /** Largest encoded envelope the broker accepts, in bytes. */
  readonly maxMessageBytes: number;
  /**
   * After this many deliveries of one message the broker moves it to its own dead-letter
   * destination (a crash loop the worker never settled, a store that was down): read it back with
   * `BrokerDeadLetters`. `false` when the broker never gives up on a message.
   */
  readonly deliveryLimit: number | false;
  /** Plain words on what `publish` resolving means for durability on this broker. */
  readonly durability: string;
  /**
   * Plain words on what `ack()` and `retry()` resolving mean, where the transport records
   * settlements with the broker after they resolve (Kafka commits offsets in batches): what a
   * crash before that costs. Absent: a settlement resolves once the broker has recorded it.
   */
  readonly settlement?: string | undefined;
}

/** One message to publish. */
export interface OutgoingMessage {
  readonly envelope: Envelope;
  /** Broker dedupe key. Defaults to `<source>:<id>` (see `dedupeKeyOf`). Replays use a distinct key. */
  readonly dedupeKey?: string | undefined;
}

/**
 * One delivery of one message to one handler. Settle it once with `ack` or `retry`; settling is
 * idempotent (the first settlement wins, later calls are no-ops). A delivery whose handler returns
 * without settling is retried by the transport at once. Dead letters are not the transport's
 * business: the worker records them in the event record and acks the message.
 */
export interface Delivery {
  readonly envelope: Envelope;
  /** 1 on the first delivery; every redelivery (retry or lock expiry) adds one. */
  readonly attempt: number;
  /**
   * Aborted when this delivery's lock is known to be lost; settling it then may not take effect.
   * It may be made on first read (already aborted if the lock is lost by then): ask `lockLost`,
   * where given, rather than reading `signal.aborted`.
   */
  readonly signal: AbortSignal;
  /**
   * True once this delivery's lock is known lost: the same as `signal.aborted`, without making
   * the signal. Optional: a transport without it is asked `signal.aborted`.
   */
  lockLost?(): boolean;
  /**
   * Done: remove the message. Resolves once the broker has recorded it, or, where the
   * transport's `capabilities.settlement` says so, once the transport holds it for its next
   * batched commit (a crash before that delivers the message again; the worker's record guard
   * makes that harmless).
   */
  ack(): Promise<void>;
  /** Deliver again, no earlier than `delayMs` from now, with `attempt + 1`. */
  retry(options: {
    readonly delayMs: number;
    readonly error?: ErrorInfo | undefined;
  }): Promise<void>;
}

/**
 * A delivery whose lock can be renewed: for `capabilities.lock.ms` again from now, the fixed
 * period brokers renew for (SQS ChangeMessageVisibility, BullMQ extendLock, JetStream `working()`).
 * Detect it with `'renewLock' in delivery`. Rejects with `LockLostError` once the lock is lost.
 */
export interface RenewableDelivery extends Delivery {
  renewLock(): Promise<void>;
}

export interface ConsumeOptions {
  /** Most handler calls in flight at once (prefetch / worker concurrency). */
  readonly concurrency: number;
}

/** A running consumer. */
export interface Subscription {
  /**
   * Stops taking new deliveries and resolves once every in-flight handler call has returned and
   * its settlement was recorded. Unsettled messages go back to the broker. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * The adapter contract: one logical queue (a queue, a topic, a BullMQ queue) on one broker.
 *
 * - `publish` resolves only after the broker has made every message durable; it rejects with
 *   `TransportUnavailableError` otherwise (some messages may then have been stored: dedupe and
 *   the worker's record guard make a re-publish harmless). It needs no prior set-up call.
 * - `consume` calls `handler` for each delivery, at most `concurrency` at a time.
 * - `close` closes subscriptions (draining) and connections. Idempotent.
 * - No I/O happens in the factory; reconnect after a broker restart is the adapter's job.
 *
 * Optional abilities are separate interfaces, detected with `in`: `TopologySetup`,
 * `BrokerDeadLetters`, `BacklogProbe`, and `RenewableDelivery` on deliveries.
 */
export interface Transport {
  /** Short broker name: `memory`, `embedded`, `sqs`, `rabbitmq`, `kafka`, `bullmq`. */
  readonly name: string;
  /**
   * The queue or topic, as the broker names it: `messaging.destination.name` on onceflow's spans.
   * Optional: spans of a transport without one are named without it.
   */
  readonly destination?: string | undefined;
  readonly capabilities: TransportCapabilities;
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
  consume(
    handler: (delivery: Delivery) => Promise<void>,
    options: ConsumeOptions,
  ): Promise<Subscription>;
  close(): Promise<void>;
}

/** Eager topology set-up (queues, exchanges, topics), for a deploy step. Idempotent. */
export interface TopologySetup {
  start(): Promise<void>;
}

/**
 * Reads what the broker moved to its own dead-letter destination (see `deliveryLimit`). The worker
 * consumes it and records each message as a dead letter in the event record, then acks it, so
 * every dead letter is listed, inspected and redriven through the record on every broker.
 */
export interface BrokerDeadLetters {
  consumeDeadLetters(
    handler: (delivery: Delivery) => Promise<void>,
    options: ConsumeOptions,
  ): Promise<Subscription>;
}

/** One partition's consumer lag: records after the consumer group's committed offset. */
export interface PartitionLag {
  readonly partition: number;
  readonly lag: number;
}

/**
 * What the broker holds of a transport's work queue, as the broker counts it (SQS's counts are
 * approximate, as SQS says). A field the broker cannot tell is absent, never 0.
 */
export interface BacklogReading {
  /** The queue or topic as the broker names it. */
  readonly queue: string;
  /** Messages ready for delivery: the queue depth (Kafka: the group's lag on the work topic). */
  readonly ready: number;
  /** Messages waiting out a retry delay before they can be delivered. */
  readonly delayed?: number | undefined;
  /** Messages delivered to a consumer and not yet settled. */
  readonly inFlight?: number | undefined;
  /** Kafka: the consumer group's lag per partition of the work topic; they add up to `ready`. */
  readonly lag?: readonly PartitionLag[] | undefined;
}

/**
 * Reads the work queue's backlog from the broker, for metrics (`createBacklogMonitor`). Each call
 * asks the broker anew and moves no message (an adapter may set its topology up first, as a first
 * `publish` does). Rejects with `TransportUnavailableError` when the broker does not answer.
 */
export interface BacklogProbe {
  backlog(): Promise<BacklogReading>;
}
