import {
  type DeliveryInit,
  ONCEFLOW_HEADERS,
  checkExtendLock,
  checkRetryDelay,
  deadLetterHeaders,
  dedupeKeyOf,
} from '@onceflow/core/kit';
import { type Envelope, LockLostError } from '@onceflow/core';
import type { KafkaMessage } from 'kafkajs';
import type { KafkaConfig } from './config.js';
import { type RecordMeta, toRecord } from './marshal.js';
import type { PartitionOffsets } from './offsets.js';
import type { Publisher } from './publisher.js';

export interface RecordContext {
  readonly config: KafkaConfig;
  readonly names: { readonly retries: readonly string[]; readonly dlq: string };
  readonly publisher: Publisher;
  readonly offsets: PartitionOffsets;
  /** Aborted when this member is known to have lost the partition. */
  readonly signal: AbortSignal;
  readonly heartbeat: () => Promise<void>;
}

/** The retry topic for a delay: the smallest tier not shorter than `delayMs`. */
export function retryTopic(ctx: RecordContext, delayMs: number): string {
  const tiers = ctx.config.retryTiersMs;
  checkRetryDelay(delayMs, tiers.at(-1) ?? 0);
  // A tier not shorter than the delay exists: the longest tier is the declared maximum.
  return ctx.names.retries[tiers.findIndex((t) => delayMs <= t)] as string;
}

/** A dead-letter record id for a record with no dedupe key to go by (one that cannot be decoded). */
export const deadLetterId = (): string =>
  `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;

/**
 * The broker side of one record, for the kit's `runDelivery`. `ack` commits the offset (once every
 * earlier record of the partition is settled too); `retry` publishes a copy with `attempt + 1` to a
 * retry topic, `deadLetter` one with the reasons to the dead-letter topic, and both then commit.
 * Once the partition is lost, settlements reject with `LockLostError` and publish nothing.
 */
export function recordDelivery(
  ctx: RecordContext,
  message: KafkaMessage,
  envelope: Envelope,
  meta: RecordMeta,
): DeliveryInit {
  const offset = Number(message.offset);
  const body = message.value?.toString('utf8') ?? '';
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
    async extendLock(ms) {
      checkExtendLock(ms, ctx.config.rebalanceTimeoutMs);
      if (ctx.signal.aborted) throw new LockLostError('kafka: this member lost the partition');
      await ctx.heartbeat().catch(() => undefined);
    },
    ack: () => settle(),
    retry: ({ delayMs, error }) => {
      const topic = retryTopic(ctx, delayMs);
      const extra: Record<string, string> = {
        [ONCEFLOW_HEADERS.notBefore]: String(Date.now() + delayMs),
      };
      if (error) extra[ONCEFLOW_HEADERS.lastError] = JSON.stringify(error);
      const record = toRecord(envelope, body, { dedupeKey, attempt: meta.attempt + 1, extra });
      return settle(() => ctx.publisher.send(topic, [record]));
    },
    deadLetter: ({ reason, error }) => {
      const extra = deadLetterHeaders({
        reason,
        attempts: meta.attempt,
        lastError: error,
        deadLetteredAt: new Date().toISOString(),
      });
      // Keyed by the dedupe key: a record dead-lettered again (its member died before the commit)
      // replaces its first dead letter instead of adding a second one.
      const record = {
        ...toRecord(envelope, body, { dedupeKey, attempt: 1, extra }),
        key: dedupeKey,
      };
      return settle(() => ctx.publisher.send(ctx.names.dlq, [record]));
    },
  };
}
