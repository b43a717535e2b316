import {
  type DeliveryInit,
  type RetryOptions,
  type RunDeliveryOptions,
  decodeMessage,
  dedupeKeyOf,
  KAFKA_BINDING,
} from '@onceflow/core/kit';
import { type Envelope, LockLostError } from '@onceflow/core';
import type { KafkaMessage } from 'kafkajs';
import { cloudEventHeaders, headerText, readAttempt, readMeta, toRecord } from './marshal.js';
import type { PartitionOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';
import type { ConsumerRoute } from './routes.js';

export interface RecordContext {
  readonly route: ConsumerRoute;
  readonly publisher: Publisher;
  readonly offsets: PartitionOffsets;
  /** Aborted when this member is known to have lost the partition. */
  readonly signal: AbortSignal;
  /** Told when no settlement of a record could be recorded (it is redelivered). */
  readonly unrecorded: (error: unknown, delivery: DeliveryInit) => void;
}

/**
 * The broker side of one record, for the kit's `runDelivery`. `ack` records the record as settled
 * in the partition's offsets, which commit it with the next batched commit (see `PartitionOffsets`);
 * `retry` first publishes the copy its route names (a retry topic, or the dead-letter topic past
 * `deliveryLimit`), the record's bytes unchanged, then records it likewise. Both resolve without
 * waiting for the commit. Once the partition is lost, or a commit of it failed, settlements reject
 * (`LockLostError`, `TransportUnavailableError`) and publish nothing. A value that is neither wire format v1 nor a CloudEvents binary-mode record is handed out as an `onceflow.undecodable` envelope.
 * No `renewLock`: the member holds the partition while it heartbeats. It is also `runDelivery`'s
 * options: a settlement that could not be recorded is reported to `ctx.unrecorded`.
 */
export function recordDelivery(
  ctx: RecordContext,
  message: KafkaMessage,
  offset: number,
): DeliveryInit & RunDeliveryOptions {
  return new RecordDelivery(ctx, message, offset);
}

/** What `ack` returns: recording an ack is synchronous, so one resolved promise serves every record. */
const SETTLED = Promise.resolve();

/** Prototype methods, not closures: one object per record on the hot path. */
class RecordDelivery implements DeliveryInit, RunDeliveryOptions {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly #ctx: RecordContext;
  readonly #message: KafkaMessage;
  readonly #offset: number;

  constructor(ctx: RecordContext, message: KafkaMessage, offset: number) {
    const value = message.value ?? Buffer.alloc(0);
    const contentType = headerText(message.headers, 'content-type');
    this.envelope = decodeMessage(value, message.headers, contentType, KAFKA_BINDING);
    this.attempt = readAttempt(message);
    this.signal = ctx.signal;
    this.#ctx = ctx;
    this.#message = message;
    this.#offset = offset;
  }

  /** `runDelivery`'s `onError`: this delivery is also its `RunDeliveryOptions`. */
  onError(error: unknown): void {
    this.#ctx.unrecorded(error, this);
  }

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
