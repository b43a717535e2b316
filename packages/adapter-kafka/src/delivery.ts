import { type DeliveryInit, decodeDelivery, dedupeKeyOf } from '@onceflow/core/kit';
import { LockLostError } from '@onceflow/core';
import type { KafkaMessage } from 'kafkajs';
import { readMeta, toRecord } from './marshal.js';
import type { PartitionOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';
import type { ConsumerRoute } from './routes.js';

export interface RecordContext {
  readonly route: ConsumerRoute;
  readonly publisher: Publisher;
  readonly offsets: PartitionOffsets;
  /** Aborted when this member is known to have lost the partition. */
  readonly signal: AbortSignal;
}

/**
 * The broker side of one record, for the kit's `runDelivery`. `ack` records the record as settled
 * in the partition's offsets, which commit it with the next batched commit (see `PartitionOffsets`);
 * `retry` first publishes the copy its route names (a retry topic, or the dead-letter topic past
 * `deliveryLimit`), the record's bytes unchanged, then records it likewise. Both resolve without
 * waiting for the commit. Once the partition is lost, or a commit of it failed, settlements reject
 * (`LockLostError`, `TransportUnavailableError`) and publish nothing. A value that is not wire format v1 is handed out as an `onceflow.undecodable` envelope.
 * No `renewLock`: the member holds the partition while it heartbeats.
 */
export function recordDelivery(ctx: RecordContext, message: KafkaMessage): DeliveryInit {
  const offset = Number(message.offset);
  const body = message.value ?? Buffer.alloc(0);
  const envelope = decodeDelivery(body);
  const meta = readMeta(message);
  // Methods, not closures: one object per record on the hot path.
  return {
    envelope,
    attempt: meta.attempt,
    signal: ctx.signal,
    async ack() {
      assertHeld(ctx, offset);
      ctx.offsets.settle(offset);
    },
    async retry(options) {
      assertHeld(ctx, offset);
      const dedupeKey = dedupeKeyOf({ envelope, dedupeKey: meta.dedupeKey });
      const copy = ctx.route.retry(meta, options, dedupeKey);
      const { attempt, key, extra } = copy;
      const record = toRecord(envelope, body, { dedupeKey, attempt, key, extra });
      await ctx.publisher.send(copy.topic, [record]);
      ctx.offsets.settle(offset);
    },
  };
}

/** Throws when a settlement of the record at `offset` can no longer be recorded. */
function assertHeld(ctx: RecordContext, offset: number): void {
  if (ctx.signal.aborted) throw new LockLostError('kafka: this member lost the partition');
  ctx.offsets.assertOpen(offset);
}
