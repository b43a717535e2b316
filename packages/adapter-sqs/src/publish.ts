import { SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createBackoff } from '@onceflow/core/kit';
import { SQS_MAX_MESSAGE_BYTES } from './config.js';
import { asTransport, SqsPublishError, type SqsUnsentMessage } from './errors.js';
import type { SqsOutgoing } from './marshal.js';

/** SQS's limits on one `SendMessageBatch`: 10 entries, 1 MiB in all. */
const MAX_ENTRIES = 10;
/** Rounds of re-sending the entries SQS failed (not the sender's fault) before giving up. */
const RESEND_ROUNDS = 4;

export interface SendTarget {
  readonly client: SQSClient;
  readonly url: string;
  readonly fifo: boolean;
  /** Aborts the requests in flight and the re-sends still to come (the publish's deadline passed). */
  readonly signal?: AbortSignal | undefined;
}

/** A message to send with its position in the `publish` call. */
interface Indexed {
  readonly index: number;
  readonly message: SqsOutgoing;
}

/** Consecutive slices of at most 10 messages and 1 MiB, in the given order. */
export function batchesOf<T extends { readonly bytes: number }>(messages: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
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

function entryOf({ index, message: m }: Indexed, fifo: boolean): SendMessageBatchRequestEntry {
  return {
    Id: String(index),
    MessageBody: m.body,
    MessageAttributes: m.attributes,
    ...(fifo ? { MessageDeduplicationId: m.dedupeId, MessageGroupId: m.groupId } : {}),
  };
}

/**
 * Sends one batch; re-sends the entries SQS failed through no fault of the sender (throttling,
 * an internal error) up to 4 more times, with jittered backoff. Returns the entries not stored in the end
 * (those SQS blamed on the entry at once): empty when every entry is stored. Never drops one.
 * A failed call (no per-entry answer) rejects with `TransportUnavailableError`.
 */
async function sendBatch(
  target: SendTarget,
  batch: readonly Indexed[],
): Promise<SqsUnsentMessage[]> {
  const unsent: SqsUnsentMessage[] = [];
  let pending = batch.map((m) => entryOf(m, target.fifo));
  const backoff = createBackoff({ baseDelayMs: 25, maxDelayMs: 400 });
  for (let round = 0; pending.length > 0; round++) {
    const out = await asTransport('publish', () =>
      target.client.send(new SendMessageBatchCommand({ QueueUrl: target.url, Entries: pending }), {
        abortSignal: target.signal,
      }),
    );
    const retry = new Set<string>();
    for (const f of out.Failed ?? []) {
      const failed = {
        index: Number(f.Id),
        code: f.Code ?? 'Unknown',
        message: f.Message ?? '',
        senderFault: f.SenderFault === true,
      };
      if (failed.senderFault || round >= RESEND_ROUNDS) unsent.push(failed);
      else retry.add(f.Id ?? '');
    }
    pending = pending.filter((e) => retry.has(e.Id ?? ''));
    if (pending.length > 0) await new Promise((r) => setTimeout(r, backoff.next()));
  }
  return unsent.sort((a, b) => a.index - b.index);
}

const notSent = (m: Indexed): SqsUnsentMessage => ({
  index: m.index,
  code: 'NotSent',
  message: 'an earlier batch of this FIFO publish failed',
  senderFault: false,
});

/**
 * Publishes in `SendMessageBatch` calls. FIFO batches go one after another so that each group
 * keeps publish order, and stop at the first batch with an entry not stored; standard-queue
 * batches go concurrently, each to its end. Rejects with `SqsPublishError` naming every message
 * not stored when some were (the rest are stored), or with `TransportUnavailableError` when a
 * call failed as a whole.
 */
export async function sendAll(target: SendTarget, messages: readonly SqsOutgoing[]): Promise<void> {
  const batches = batchesOf(
    messages.map((message, index) => ({ index, message, bytes: message.bytes })),
  );
  const unsent: SqsUnsentMessage[] = [];
  if (target.fifo) {
    for (const [i, batch] of batches.entries()) {
      unsent.push(...(await sendBatch(target, batch)));
      if (unsent.length > 0) {
        unsent.push(
          ...batches
            .slice(i + 1)
            .flat()
            .map(notSent),
        );
        break;
      }
    }
  } else {
    const results = await Promise.allSettled(batches.map((batch) => sendBatch(target, batch)));
    const rejected = results.find((r) => r.status === 'rejected');
    if (rejected) throw rejected.reason;
    for (const r of results) if (r.status === 'fulfilled') unsent.push(...r.value);
  }
  if (unsent.length > 0) throw new SqsPublishError(messages.length, unsent);
}
