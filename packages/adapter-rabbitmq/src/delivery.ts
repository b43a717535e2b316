import { checkExtendLock, type DeliveryInit } from '@onceflow/core/kit';
import { LockLostError } from '@onceflow/core';
import type { Message } from 'amqplib';
import type { AckBatcher } from './acks.js';
import { toDeadLetterMessage, toWorkMessage, type WorkMessage } from './marshal.js';
import type { OutgoingAmqp } from './publisher.js';
import type { QueueNames } from './topology.js';

/** The consumer channel a delivery arrived on; `signal` aborts when that channel is lost. */
export interface ConsumerChannel {
  readonly acks: AckBatcher;
  readonly signal: AbortSignal;
}

export interface DeliveryDeps {
  readonly names: QueueNames;
  readonly maxMessageBytes: number;
  readonly consumerTimeoutMs: number;
  /** Publishes with confirms (the transport's publisher). */
  send(messages: readonly OutgoingAmqp[]): Promise<void>;
  /** The retry queue for `delayMs` (declared on first use), or the work queue for 0. */
  retryQueue(delayMs: number): Promise<string>;
}

/**
 * The broker side of one delivery, for the kit's `runDelivery`. `retry` and `deadLetter` publish a
 * copy (to a retry queue or the dead-letter queue) and ack the original only once the broker
 * confirmed the copy, so nothing is lost in between; if the consumer channel is lost in that
 * window the original returns as well and arrives again (the processed-guard makes it harmless).
 * Every settlement rejects with `LockLostError`, publishing nothing, once the channel is lost.
 * `ack` resolves once written to the channel (acks of one event-loop turn go out together, see
 * `acks.ts`); AMQP does not confirm acks, so an ack lost with its connection means one more delivery.
 */
export function brokerDelivery(
  deps: DeliveryDeps,
  consumer: ConsumerChannel,
  msg: Message,
  work: WorkMessage,
): DeliveryInit {
  const what = `${deps.names.work}/${work.envelope.id}`;
  const held = () => {
    if (consumer.signal.aborted) {
      throw new LockLostError(`${what}: its consumer channel closed; it will be redelivered`);
    }
  };
  const ackOriginal = async () => {
    held();
    try {
      await consumer.acks.ack(msg);
    } catch (err) {
      throw new LockLostError(`${what}: ack failed: ${(err as Error).message}`, { cause: err });
    }
  };
  const republish = async (copy: OutgoingAmqp) => {
    held();
    await deps.send([copy]);
    await ackOriginal();
  };

  return {
    envelope: work.envelope,
    attempt: work.attempt,
    signal: consumer.signal,
    async extendLock(ms) {
      checkExtendLock(ms, deps.consumerTimeoutMs);
      held(); // nothing to renew: the delivery is held as long as its channel lives
    },
    ack: ackOriginal,
    async retry({ delayMs, error }) {
      const queue = await deps.retryQueue(delayMs);
      const next = { ...work, attempt: work.attempt + 1, lastError: error ?? work.lastError };
      await republish(toWorkMessage(queue, next, deps.maxMessageBytes));
    },
    async deadLetter({ reason, error }) {
      const fields = {
        reason,
        attempts: work.attempt,
        lastError: error ?? work.lastError,
        deadLetteredAt: new Date().toISOString(),
      };
      await republish(toDeadLetterMessage(deps.names.deadLetter, work, fields));
    },
  };
}
