import {
  type DeliveryInit,
  type RetryOptions,
  type RunDeliveryOptions,
  decodeMessage,
  dedupeKeyOf,
  KAFKA_BINDING,
  runDelivery,
  SETTLED,
} from '@onceflow/core/kit';
import { type Delivery, type Envelope, LockLostError } from '@onceflow/core';
import type { KafkaMessage } from 'kafkajs';
import { cloudEventHeaders, headerText, readAttempt, readMeta, toRecord } from './marshal.js';
import type { PartitionOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';
import type { ConsumerRoute } from './routes.js';

export interface RecordContext {
  /** The subscription's handler, run on each record's delivery. */
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly route: ConsumerRoute;
  readonly publisher: Publisher;
  readonly offsets: PartitionOffsets;
  /** Aborted when this member is known to have lost the partition. */
  readonly signal: AbortSignal;
  /** Told when no settlement of a record could be recorded (it is redelivered). */
  readonly unrecorded: (error: unknown, delivery: DeliveryInit) => void;
}

/** A turn of the event loop, for a record whose key has no record before it in the batch. */
const TURN: Promise<void> = Promise.resolve();

/**
 * Hands out one record of a batch: its delivery runs (`runDelivery` with `ctx.handler`) once
 * `before`, the delivery of the previous record of its key, has settled, and never inside the
 * caller's loop (at the earliest a microtask later). Resolves once the record is settled, or
 * abandoned (no settlement could be recorded: `ctx.offsets.abandon`, and `ctx.unrecorded` is
 * told); never rejects. The envelope is decoded when the record's turn comes.
 *
 * @example
 * lanes.set(key, handOut(ctx, message, Number(message.offset), lanes.get(key)));
 */
export function handOut(
  ctx: RecordContext,
  message: KafkaMessage,
  offset: number,
  before: Promise<unknown> | undefined,
): Promise<unknown> {
  return (before ?? TURN).then(new RecordDelivery(ctx, message, offset).deliver);
}

/**
 * The broker side of one record, for the kit's `runDelivery`. `ack` records the record as settled
 * in the partition's offsets, which commit it with the next batched commit (see `PartitionOffsets`);
 * `retry` first publishes the copy its route names (a retry topic, or the dead-letter topic past
 * `deliveryLimit`), the record's bytes unchanged, then records it likewise. Both resolve without
 * waiting for the commit. Once the partition is lost, or a commit of it failed, settlements reject
 * (`LockLostError`, `TransportUnavailableError`) and publish nothing. A value that is neither wire format v1 nor a CloudEvents binary-mode record is handed out as an `onceflow.undecodable` envelope.
 * No `renewLock`: the member holds the partition while it heartbeats. It is also `runDelivery`'s
 * options: a record of which no settlement could be recorded is abandoned in the partition's
 * offsets and reported to `ctx.unrecorded`.
 */

/** Decoding and runDelivery never throw; if they did, the record would stay unsettled. */
const UNSETTLED: Promise<undefined> = Promise.resolve(undefined);

/** Prototype methods and one closure (`deliver`): one object per record on the hot path. */
class RecordDelivery implements DeliveryInit, RunDeliveryOptions {
  /** Set when the record's turn comes (`deliver`), before anything reads it. */
  envelope!: Envelope;
  attempt = 1;
  readonly signal: AbortSignal;
  /** Decodes the record and runs its delivery; for `then`, so made once, in the constructor. */
  readonly deliver: () => Promise<unknown>;
  readonly #ctx: RecordContext;
  readonly #message: KafkaMessage;
  readonly #offset: number;

  constructor(ctx: RecordContext, message: KafkaMessage, offset: number) {
    this.signal = ctx.signal;
    this.#ctx = ctx;
    this.#message = message;
    this.#offset = offset;
    // Assigned here, not as a field initialiser: a transpiler keeping names (tsx) would otherwise
    // redefine the closure's `name` on every record.
    this.deliver = () => this.#deliver();
  }

  #deliver(): Promise<unknown> {
    try {
      const message = this.#message;
      const value = message.value ?? Buffer.alloc(0);
      const contentType = headerText(message.headers, 'content-type');
      this.envelope = decodeMessage(value, message.headers, contentType, KAFKA_BINDING);
      this.attempt = readAttempt(message);
      // The delivery is its own options: its `onError` abandons the record.
      return runDelivery(this.#ctx.handler, this, this);
    } catch {
      return UNSETTLED;
    }
  }

  /**
   * `runDelivery`'s `onError`, called when no settlement could be recorded: the offset never
   * moves past this record, which is redelivered with every later one.
   */
  onError(error: unknown): void {
    this.#ctx.offsets.abandon(this.#offset);
    this.#ctx.unrecorded(error, this);
  }

  /** Recording an ack is synchronous (the offset marked in memory): answers with the kit's `SETTLED`. */
  ack(): Promise<void> {
    try {
      assertHeld(this.#ctx, this.#offset);
      this.#ctx.offsets.settle(this.#offset);
    } catch (err) {
      return Promise.reject(err);
    }
    return SETTLED;
  }

  async retry(options: RetryOptions): Promise<void> {
    const ctx = this.#ctx;
    const message = this.#message;
    const envelope = this.envelope;
    assertHeld(ctx, this.#offset);
    const meta = readMeta(message);
    const dedupeKey = dedupeKeyOf({ envelope, dedupeKey: meta.dedupeKey });
    const copy = ctx.route.retry(meta, options, dedupeKey);
    const { attempt, key, extra } = copy;
    const body = message.value ?? Buffer.alloc(0);
    const cloudEvent = cloudEventHeaders(message);
    const record = toRecord(envelope, body, { dedupeKey, attempt, key, extra, cloudEvent });
    await ctx.publisher.send(copy.topic, [record]);
    ctx.offsets.settle(this.#offset);
  }
}

/** Throws when a settlement of the record at `offset` can no longer be recorded. */
function assertHeld(ctx: RecordContext, offset: number): void {
  if (ctx.signal.aborted) throw new LockLostError('kafka: this member lost the partition');
  ctx.offsets.assertOpen(offset);
}
