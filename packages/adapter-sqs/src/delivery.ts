import {
  ChangeMessageVisibilityCommand,
  type Message,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type DeadLetterReason, type Envelope, LockLostError } from '@onceflow/core';
import { checkExtendLock, checkRetryDelay, type DeliveryInit, watchLock } from '@onceflow/core/kit';
import { toDeadLetterEntry } from './dead-letter-message.js';
import type { DeleteBatcher } from './delete-batcher.js';
import { asTransport } from './errors.js';

/** SQS keeps a received message invisible for at most 12 hours from its receipt. */
export const MAX_VISIBILITY_MS = 12 * 3_600_000;
/** The longest `retry` delay declared; the delay and the time held must stay within 12 h together. */
export const MAX_DELAY_MS = 11 * 3_600_000;

export interface DeliveryDeps {
  readonly client: SQSClient;
  readonly url: string;
  readonly deadLetterUrl: string;
  readonly fifo: boolean;
  readonly deletes: DeleteBatcher;
}

/** A received message: what SQS returned and when this process asked for it. */
export interface Received {
  readonly message: Message;
  /**
   * Epoch ms when the receive response arrived. SQS starts the visibility timeout when it hands
   * the message out, which for a long poll can be long after the request was sent; the response
   * follows within the network's transit time, which the lock margin covers.
   */
  readonly receivedAt: number;
  readonly lockMs: number;
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * The broker side of one received message, for the kit's `runDelivery`. `ack` is a batched
 * delete; `retry` and `extendLock` are `ChangeMessageVisibility` (rounded up to whole seconds, so
 * never early); `deadLetter` sends the message with its reason to the dead-letter queue, then
 * deletes it. Each is refused with `LockLostError` once the visibility is lost (see
 * `watchVisibility`). `dispose` must be called once the delivery is settled.
 */
export function receivedDelivery(
  deps: DeliveryDeps,
  received: Received,
  envelope: Envelope,
  attempt: number,
): DeliveryInit & { dispose(): void } {
  const { client, url, deletes } = deps;
  const { message, receivedAt, lockMs } = received;
  const handle = message.ReceiptHandle ?? '';
  const what = `${url.slice(url.lastIndexOf('/') + 1)}/${envelope.id}`;
  const watch = watchLock({
    until: receivedAt + lockMs,
    describe: `visibility of ${what}`,
    // SQS rounds a granted visibility to whole seconds and the deadline is this process's estimate.
    marginMs: Math.min(1000, lockMs / 10),
    expiredReason: 'the visibility timeout ran out',
  });

  /** Runs a call that needs the visibility; a refused receipt handle marks it lost. */
  const holding = async (op: string, run: () => Promise<unknown>): Promise<void> => {
    watch.assertHeld(op);
    try {
      await asTransport(op, run);
    } catch (err) {
      if (err instanceof LockLostError) watch.lost(`${op}: ${err.message}`);
      throw err;
    }
  };
  const changeVisibility = (ms: number) =>
    client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: handle,
        VisibilityTimeout: seconds(ms),
      }),
    );
  const withinTwelveHours = (op: string, ms: number) => {
    if (Date.now() + ms - receivedAt > MAX_VISIBILITY_MS)
      throw new RangeError(
        `${op}(${ms}) on ${what}: SQS keeps a received message invisible for 12 hours at most`,
      );
  };

  return {
    envelope,
    attempt,
    signal: watch.signal,
    async extendLock(ms) {
      checkExtendLock(ms, MAX_VISIBILITY_MS);
      withinTwelveHours('extendLock', ms);
      const from = Date.now();
      await holding('extendLock', () => changeVisibility(ms));
      watch.renew(from + ms);
    },
    ack: () => holding('ack', () => deletes.delete(handle)),
    async retry({ delayMs }) {
      checkRetryDelay(delayMs, MAX_DELAY_MS);
      withinTwelveHours('retry', delayMs);
      await holding('retry', () => changeVisibility(delayMs));
    },
    async deadLetter(reason: DeadLetterReason) {
      const entry = toDeadLetterEntry(
        message,
        {
          reason: reason.reason,
          attempts: attempt,
          lastError: reason.error,
          deadLetteredAt: new Date().toISOString(),
        },
        deps.fifo,
      );
      await holding('deadLetter', () =>
        client.send(new SendMessageCommand({ QueueUrl: deps.deadLetterUrl, ...entry })),
      );
      await holding('deadLetter', () => deletes.delete(handle));
    },
    dispose: () => watch.dispose(),
  };
}
