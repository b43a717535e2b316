import { DeleteMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { LockLostError, TransportUnavailableError } from '@onceflow/core';
import { asTransport } from './errors.js';

/** Deletes by receipt handle, grouping deletes asked for close together into batches. */
export interface DeleteBatcher {
  /** Resolves once SQS has deleted the message; rejects with `LockLostError` if SQS refused the handle. */
  delete(receiptHandle: string): Promise<void>;
}

/** How long the first delete of a batch waits for others, in ms (a full batch goes at once). */
const GATHER_MS = 1;

interface Pending {
  readonly handle: string;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Acks go to SQS as `DeleteMessageBatch` calls of up to 10: deletes asked for within 1 ms of the
 * first one share a call (ten go at once), so a burst of acks costs a tenth of the requests, for
 * at most 1 ms more per ack. Each caller still learns its own entry's result. Safe to call
 * concurrently.
 *
 * @example
 * const deletes = createDeleteBatcher(client, queueUrl);
 * await deletes.delete(message.ReceiptHandle);
 */
export function createDeleteBatcher(client: SQSClient, url: string): DeleteBatcher {
  let queue: Pending[] = [];
  let scheduled = false;
  let timer: NodeJS.Timeout | undefined;

  const send = async (batch: Pending[]) => {
    try {
      const out = await asTransport('ack', () =>
        client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map((p, i) => ({ Id: String(i), ReceiptHandle: p.handle })),
          }),
        ),
      );
      const failed = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
      for (const [i, p] of batch.entries()) {
        const f = failed.get(String(i));
        if (f === undefined) {
          p.resolve();
          continue;
        }
        const text = `${f.Code}${f.Message ? `: ${f.Message}` : ''}`;
        p.reject(
          f.Code === 'ReceiptHandleIsInvalid'
            ? new LockLostError(`sqs ack: the visibility timeout ran out (${text})`)
            : new TransportUnavailableError(`sqs ack failed: ${text}`),
        );
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    scheduled = false;
    const all = queue;
    queue = [];
    for (let i = 0; i < all.length; i += 10) void send(all.slice(i, i + 10));
  };

  return {
    delete(handle) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ handle, resolve, reject });
        if (queue.length >= 10) flush();
        else if (!scheduled) {
          scheduled = true;
          timer = setTimeout(flush, GATHER_MS);
        }
      });
    },
  };
}
