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
 * The broker side of one record, for the kit's `runDelivery`. `ack` commits the offset (once every
 * earlier record of the partition is settled too); `retry` publishes the copy its route names (a
 * retry topic, or the dead-letter topic past `deliveryLimit`), the record's bytes unchanged, then
 * commits. Once the partition is lost, settlements reject with `LockLostError` and publish
 * nothing. A value that is not wire format v1 is handed out as an `onceflow.undecodable` envelope.
 * No `renewLock`: the member holds the partition while it heartbeats.
 */
export function recordDelivery(ctx: RecordContext, message: KafkaMessage): DeliveryInit {
  const offset = Number(message.offset);
  const body = message.value ?? Buffer.alloc(0);
  const envelope = decodeDelivery(body);
  const meta = readMeta(message);
  const dedupeKey = dedupeKeyOf({ envelope, dedupeKey: meta.dedupeKey });
  const settle = async (publish?: () => Promise<void>) => {
    if (ctx.signal.aborted) throw new LockLostError('kafka: this member lost the partition');
    await publish?.();
    await ctx.offsets.finish(offset);
  };
  return {
    envelope,
    attempt: meta.attempt,
    signal: ctx.signal,
    ack: () => settle(),
    retry: async (options) => {
      const copy = ctx.route.retry(meta, options, dedupeKey);
      const { attempt, key, extra } = copy;
      const record = toRecord(envelope, body, { dedupeKey, attempt, key, extra });
      return settle(() => ctx.publisher.send(copy.topic, [record]));
    },
  };
}
