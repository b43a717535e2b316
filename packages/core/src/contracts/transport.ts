import type { Envelope } from '../envelope.js';
import type { ErrorInfo } from '../errors.js';

/**
 * What an adapter promises beyond the contract's minimum. The worker and the conformance suite
 * read these; the suite tests every declared capability and, for every undeclared one, the
 * fallback (e.g. no broker dedupe → the worker's processed-guard must still make effects happen once).
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
   * How a lock is lost. `message`: each delivery has its own lock/visibility/lease that expires
   * unless extended (SQS, BullMQ, embedded). `consumer`: deliveries return when the consumer holding
   * them dies or loses its session (RabbitMQ channel loss, Kafka rebalance). `maxMs` is the longest
   * lock a single `extendLock` can ask for.
   */
  readonly lock: { readonly scope: 'message' | 'consumer'; readonly maxMs: number };
  /** The longest `retry({ delayMs })` the transport schedules without delivering early. */
  readonly maxDelayMs: number;
  /** Largest encoded envelope the broker accepts, in bytes. */
  readonly maxMessageBytes: number;
  /** Plain words on what `publish` resolving means for durability on this broker. */
  readonly durability: string;
}

/** One message to publish. */
export interface OutgoingMessage {
  readonly envelope: Envelope;
  /** Broker dedupe key. Defaults to `<source>:<id>` (see `dedupeKeyOf`). Replays use a distinct key. */
  readonly dedupeKey?: string | undefined;
}

/** Why a delivery was dead-lettered; attempts and time are added by the transport. */
export interface DeadLetterReason {
  /** Short human text: `attempts exhausted`, `schema: amount must be a number`, … */
  readonly reason: string;
  /** The last error, if one caused this. */
  readonly error?: ErrorInfo | undefined;
}

/**
 * One delivery of one message to one handler. Settle it exactly once with `ack`, `retry` or
 * `deadLetter`. Settling is idempotent: the first settlement wins and later calls are no-ops.
 * A delivery whose handler returns without settling is retried by the transport at once.
 */
export interface Delivery {
  readonly envelope: Envelope;
  /** 1 on the first delivery; every redelivery (retry or lock expiry) adds one. */
  readonly attempt: number;
  /** Aborted when this delivery's lock is known to be lost; settling it then may not take effect. */
  readonly signal: AbortSignal;
  /** Done: remove the message. Resolves once the broker has recorded it. */
  ack(): Promise<void>;
  /** Deliver again, no earlier than `delayMs` from now, with `attempt + 1`. */
  retry(options: {
    readonly delayMs: number;
    readonly error?: ErrorInfo | undefined;
  }): Promise<void>;
  /** Move to the dead-letter store now, keeping reason, attempts and last error. */
  deadLetter(reason: DeadLetterReason): Promise<void>;
  /** Hold the lock for `ms` more from now. Rejects with `LockLostError` if it is already lost. */
  extendLock(ms: number): Promise<void>;
}

export interface ConsumeOptions {
  /** Most handler calls in flight at once (prefetch / worker concurrency). */
  readonly concurrency: number;
  /** Initial lock (visibility timeout, lease, lockDuration) per delivery, in ms. */
  readonly lockMs: number;
}

/** A running consumer. */
export interface Subscription {
  /**
   * Stops taking new deliveries and resolves once every in-flight handler call has returned and
   * its settlement was recorded. Unsettled messages go back to the broker. Idempotent.
   */
  close(): Promise<void>;
}

/** A message in the dead-letter store. */
export interface DeadLetter {
  /** Store-specific id, stable for `get`, `redrive` and `purge`. */
  readonly id: string;
  readonly envelope: Envelope;
  readonly reason: string;
  /** Attempts made before it was dead-lettered. */
  readonly attempts: number;
  readonly lastError?: ErrorInfo | undefined;
  /** ISO-8601. */
  readonly deadLetteredAt: string;
}

/**
 * The dead-letter API every transport exposes. `redrive` sends messages back to the work queue
 * with `attempt` starting again at 1 and removes them from the store; `purge` deletes them.
 * Both act on all dead letters when `ids` is omitted, and return how many they touched.
 */
export interface DeadLetters {
  /** Oldest first. */
  list(options?: { readonly limit?: number | undefined }): Promise<DeadLetter[]>;
  get(id: string): Promise<DeadLetter | undefined>;
  redrive(ids?: readonly string[]): Promise<number>;
  purge(ids?: readonly string[]): Promise<number>;
  /** How many dead letters are stored (the dead-letter depth). */
  count(): Promise<number>;
}

/**
 * The adapter contract: one logical queue (a queue, a topic, a BullMQ queue) on one broker.
 *
 * - `publish` resolves only after the broker has made every message durable; it rejects with
 *   `TransportUnavailableError` otherwise (some messages may then have been stored: dedupe and
 *   the processed-guard make a re-publish harmless).
 * - `consume` calls `handler` for each delivery, at most `concurrency` at a time.
 * - `start` sets up topology (idempotent); `close` closes subscriptions (draining) and connections.
 * - No I/O happens in the factory; reconnect after a broker restart is the adapter's job.
 */
export interface Transport {
  /** Short broker name: `memory`, `embedded`, `sqs`, `rabbitmq`, `kafka`, `bullmq`. */
  readonly name: string;
  readonly capabilities: TransportCapabilities;
  readonly deadLetters: DeadLetters;
  start(): Promise<void>;
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
  consume(
    handler: (delivery: Delivery) => Promise<void>,
    options: ConsumeOptions,
  ): Promise<Subscription>;
  close(): Promise<void>;
}
