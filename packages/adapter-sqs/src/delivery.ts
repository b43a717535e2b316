import { ChangeMessageVisibilityCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { type Envelope, LockLostError } from '@onceflow/core';
import { checkRetryDelay, type DeliveryInit, watchLock } from '@onceflow/core/kit';
import { MAX_VISIBILITY_MS } from './config.js';
import type { DeleteBatcher } from './delete-batcher.js';
import { asTransport } from './errors.js';

/** The longest `retry` delay declared; the delay and the time held must stay within 12 h together. */
export const MAX_DELAY_MS = 11 * 3_600_000;

/** The queue a delivery came from: the work queue, or the dead-letter queue. */
export interface DeliveryDeps {
  readonly client: SQSClient;
  readonly url: string;
  /** Deletes on `url`. */
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
 * delete; `retry` is `ChangeMessageVisibility(delayMs)` and `renewLock` is
 * `ChangeMessageVisibility(lockMs)` (rounded up to whole seconds, so never early). Each is refused
 * with `LockLostError`, without calling SQS, once the visibility is lost (AWS would accept an
 * outdated receipt handle); one that would hold the message past 12 hours from its receipt is
 * refused with `RangeError`. `dispose` must be called once the delivery is settled.
 */
export function receivedDelivery(
  deps: DeliveryDeps,
  received: Received,
  envelope: Envelope,
  attempt: number,
): DeliveryInit & { dispose(): void; onLockLost(listener: () => void): void } {
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
  /**
   * `receivedAt` is when the receive's answer arrived, so SQS's own receipt was earlier: a
   * visibility that would end exactly 12 hours after `receivedAt` already ends past SQS's limit.
   * What is checked is what is asked for, rounded up to whole seconds.
   */
  const withinTwelveHours = (op: string, ms: number) => {
    if (Date.now() + seconds(ms) * 1000 - receivedAt >= MAX_VISIBILITY_MS)
      throw new RangeError(
        `${op} for ${ms} ms on ${what}: SQS keeps a received message invisible for 12 hours at most`,
      );
  };

  return {
    envelope,
    attempt,
    // Made on first read only (a handler reading `ctx.signal`); `lockLost` answers without it.
    get signal() {
      return watch.signal;
    },
    lockLost: () => watch.isLost(),
    onLockLost: (listener) => watch.onLost(listener),
    async renewLock() {
      watch.assertHeld('renewLock'); // a lost lock says so before any other refusal
      withinTwelveHours('renewLock', lockMs);
      const from = Date.now();
      await holding('renewLock', () => changeVisibility(lockMs));
      watch.renew(from + lockMs);
    },
    ack: () => holding('ack', () => deletes.delete(handle)),
    async retry({ delayMs }) {
      checkRetryDelay(delayMs, MAX_DELAY_MS);
      withinTwelveHours('retry', delayMs);
      await holding('retry', () => changeVisibility(delayMs));
    },
    dispose: () => watch.dispose(),
  };
}
