import type { Channel, Options } from 'amqplib';

/** The queue names derived from one work queue. */
export interface QueueNames {
  readonly work: string;
  readonly deadLetter: string;
  /** The delay bucket of `target` (the work queue or the dead-letter queue) for `delayMs`. */
  retry(delayMs: number, target?: string): string;
}

export const queueNames = (queue: string): QueueNames => ({
  work: queue,
  deadLetter: `${queue}.dlq`,
  retry: (delayMs, target = queue) => `${target}.retry.${delayMs}`,
});

/**
 * Quorum queues dead-letter at-least-once (RabbitMQ 3.10+, needs `reject-publish` overflow), so a
 * message moved by the broker (delivery limit, retry TTL) is never lost in between.
 */
const quorumArgs = {
  'x-queue-type': 'quorum',
  'x-dead-letter-strategy': 'at-least-once',
  'x-overflow': 'reject-publish',
};

/** Dead-letters through the default exchange straight into `target`. */
const deadLetterTo = (target: string) => ({
  'x-dead-letter-exchange': '',
  'x-dead-letter-routing-key': target,
});

export type QueueType = 'quorum' | 'classic';

/** How the work queue is declared; every transport on one queue must agree on it. */
export interface WorkQueueSettings {
  readonly type: QueueType;
  readonly deliveryLimit: number;
}

/**
 * Declares the work queue and its dead-letter queue. Idempotent (same arguments each time); a
 * queue that exists with other arguments (another `queueType` or `deliveryLimit`) is refused by
 * the broker with PRECONDITION_FAILED.
 *
 * - work queue: durable, quorum where supported, dead-lettering to `<queue>.dlq`. A quorum queue
 *   gets `x-delivery-limit` = `deliveryLimit`: the adapter moves a message past the limit itself
 *   (with onceflow's dead-letter headers), and the broker does it should the adapter fail to.
 * - `<queue>.dlq`: the broker's dead-letter destination, a durable classic queue with no delivery
 *   limit of its own, so a dead letter is never dropped.
 */
export async function declareTopology(
  ch: Channel,
  names: QueueNames,
  settings: WorkQueueSettings,
): Promise<void> {
  await ch.assertQueue(names.deadLetter, { durable: true });
  await ch.assertQueue(names.work, workQueueOptions(names, settings));
}

export function workQueueOptions(
  names: QueueNames,
  { type, deliveryLimit }: WorkQueueSettings,
): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      ...(type === 'quorum' ? { ...quorumArgs, 'x-delivery-limit': deliveryLimit } : {}),
      ...deadLetterTo(names.deadLetter),
    },
  };
}

/** A delay bucket: messages wait `delayMs` (message TTL), then dead-letter to `target`. */
export function retryQueueOptions(
  target: string,
  type: QueueType,
  delayMs: number,
): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      ...(type === 'quorum' ? quorumArgs : {}),
      ...deadLetterTo(target),
      'x-message-ttl': delayMs,
    },
  };
}

/** Quorum queues from RabbitMQ 3.8 on; `auto` picks them when the server has them. */
export function resolveQueueType(
  wanted: 'auto' | QueueType,
  serverVersion: string | undefined,
): QueueType {
  if (wanted !== 'auto') return wanted;
  const [major = 0, minor = 0] = (serverVersion ?? '').split('.').map(Number);
  return major > 3 || (major === 3 && minor >= 8) ? 'quorum' : 'classic';
}
