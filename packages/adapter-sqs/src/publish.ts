import {
  type BatchResultErrorEntry,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { TransportUnavailableError } from '@onceflow/core';
import { SQS_MAX_MESSAGE_BYTES } from './config.js';
import { asTransport } from './errors.js';
import type { SqsOutgoing } from './marshal.js';

/** SQS's limits on one `SendMessageBatch`: 10 entries, 1 MiB in all. */
const MAX_ENTRIES = 10;
/** Rounds of re-sending the entries SQS failed (not the sender's fault) before giving up. */
const RESEND_ROUNDS = 4;

export interface SendTarget {
  readonly client: SQSClient;
  readonly url: string;
  readonly fifo: boolean;
}

/** Consecutive slices of at most 10 messages and 1 MiB, in the given order. */
export function batchesOf(messages: readonly SqsOutgoing[]): SqsOutgoing[][] {
  const batches: SqsOutgoing[][] = [];
  let current: SqsOutgoing[] = [];
  let bytes = 0;
  for (const m of messages) {
    if (
      current.length === MAX_ENTRIES ||
      (current.length > 0 && bytes + m.bytes > SQS_MAX_MESSAGE_BYTES)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += m.bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function entryOf(m: SqsOutgoing, id: number, fifo: boolean): SendMessageBatchRequestEntry {
  return {
    Id: String(id),
    MessageBody: m.body,
    MessageAttributes: m.attributes,
    ...(fifo ? { MessageDeduplicationId: m.dedupeId, MessageGroupId: m.groupId } : {}),
  };
}

/**
 * Sends one batch and re-sends the entries SQS reports failed through no fault of the sender
 * (throttling, an internal error), up to 4 more times. Resolves only when every entry is stored;
 * otherwise rejects with `TransportUnavailableError` naming what failed. Never drops an entry.
 */
async function sendBatch(target: SendTarget, batch: readonly SqsOutgoing[]): Promise<void> {
  let pending = batch.map((m, i) => entryOf(m, i, target.fifo));
  let failed: BatchResultErrorEntry[] = [];
  for (let round = 0; pending.length > 0; round++) {
    const out = await asTransport('publish', () =>
      target.client.send(new SendMessageBatchCommand({ QueueUrl: target.url, Entries: pending })),
    );
    failed = out.Failed ?? [];
    if (failed.length === 0) return;
    const retryable = new Set(failed.filter((f) => !f.SenderFault).map((f) => f.Id));
    if (retryable.size < failed.length || round >= RESEND_ROUNDS) break;
    pending = pending.filter((e) => retryable.has(e.Id));
    await new Promise((r) => setTimeout(r, 25 * 2 ** round));
  }
  const what = failed.map((f) => `${f.Code}${f.Message ? ` (${f.Message})` : ''}`).join('; ');
  throw new TransportUnavailableError(
    `sqs publish: ${failed.length} of ${batch.length} messages were not stored: ${what}`,
  );
}

/**
 * Publishes in `SendMessageBatch` calls. FIFO batches go one after another so that each group
 * keeps publish order; standard-queue batches go concurrently.
 */
export async function sendAll(target: SendTarget, messages: readonly SqsOutgoing[]): Promise<void> {
  const batches = batchesOf(messages);
  if (target.fifo) {
    for (const batch of batches) await sendBatch(target, batch);
  } else {
    await Promise.all(batches.map((batch) => sendBatch(target, batch)));
  }
}
