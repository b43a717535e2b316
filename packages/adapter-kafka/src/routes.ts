import {
  ONCEFLOW_HEADERS,
  type RetryOptions,
  checkRetryDelay,
  deadLetterHeaders,
} from '@onceflow/core/kit';
import { type KafkaConfig, topicNames } from './config.js';
import type { RecordMeta } from './marshal.js';

/** The copy a retry publishes before the original's offset is committed. */
export interface RetryCopy {
  readonly topic: string;
  /** The copy's attempt header: the attempt its next delivery will have. */
  readonly attempt: number;
  /** Record key; default the envelope's ordering key. */
  readonly key?: string | undefined;
  readonly extra: Readonly<Record<string, string>>;
}

/** Where one consumer group reads, and where its retries go. */
export interface ConsumerRoute {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** The dead-letter topic: its tombstones (left by earlier versions' purges) are skipped. */
  readonly dlq: string;
  /** Topics whose records carry a due time (`x-onceflow-not-before`) and wait for it. */
  delayed(topic: string): boolean;
  /** Throws `RangeError` for a delay beyond the largest retry tier. */
  retry(meta: RecordMeta, options: RetryOptions, dedupeKey: string): RetryCopy;
}

const due = (delayMs: number) => ({ [ONCEFLOW_HEADERS.notBefore]: String(Date.now() + delayMs) });

/**
 * The workers' route: the work topic and its retry tiers. A retry goes to the smallest tier not
 * shorter than its delay with `attempt + 1`; one from the `deliveryLimit`-th delivery goes to
 * `<topic>.dlq` instead, with the dead-letter headers and its delivery count as attempt.
 */
export function workRoute(config: KafkaConfig): ConsumerRoute {
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const tiers = config.retryTiersMs;
  return {
    groupId: config.groupId,
    topics: [names.main, ...names.retries],
    dlq: names.dlq,
    delayed: (topic) => topic !== names.main,
    retry(meta, { delayMs, error }, dedupeKey) {
      checkRetryDelay(delayMs, tiers.at(-1) ?? 0);
      if (meta.attempt >= config.deliveryLimit) {
        const extra = deadLetterHeaders({
          reason: `delivery limit exceeded after ${meta.attempt} deliveries`,
          attempts: meta.attempt,
          lastError: error ?? meta.lastError,
          deadLetteredAt: new Date().toISOString(),
        });
        // Keyed by the dedupe key: a dead-letter topic an earlier version created compacted
        // refuses records without a key.
        return { topic: names.dlq, attempt: meta.attempt, key: dedupeKey, extra };
      }
      const extra: Record<string, string> = due(delayMs);
      if (error) extra[ONCEFLOW_HEADERS.lastError] = JSON.stringify(error);
      // A tier not shorter than the delay exists: the longest tier is the declared maximum.
      const topic = names.retries[tiers.findIndex((t) => delayMs <= t)] as string;
      return { topic, attempt: meta.attempt + 1, extra };
    },
  };
}

/**
 * The dead-letter route: `<topic>.dlq` in group `<groupId>.dlq`. A retry goes back to the
 * dead-letter topic with `attempt + 1`, due after its delay, its dead-letter headers kept.
 */
export function deadLetterRoute(config: KafkaConfig): ConsumerRoute {
  const { dlq } = topicNames(config.topic, config.retryTiersMs.length);
  return {
    groupId: `${config.groupId}.dlq`,
    topics: [dlq],
    dlq,
    delayed: () => true,
    retry(meta, { delayMs, error }, dedupeKey) {
      checkRetryDelay(delayMs, config.retryTiersMs.at(-1) ?? 0);
      const extra: Record<string, string> = { ...meta.deadLetter, ...due(delayMs) };
      if (error) extra[ONCEFLOW_HEADERS.lastError] = JSON.stringify(error);
      return { topic: dlq, attempt: meta.attempt + 1, key: dedupeKey, extra };
    },
  };
}
