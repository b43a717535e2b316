import type { Channel, Options } from 'amqplib';

/** The queue names derived from one work queue. */
export interface QueueNames {
  readonly work: string;
  readonly deadLetter: string;
  retry(delayMs: number): string;
}

export const queueNames = (queue: string): QueueNames => ({
  work: queue,
  deadLetter: `${queue}.dlq`,
  retry: (delayMs) => `${queue}.retry.${delayMs}`,
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

/**
 * Declares the work queue and its dead-letter queue. Idempotent (same arguments each time).
 *
 * - work queue: durable, quorum where supported, dead-lettering to `<queue>.dlq`, so what the
 *   broker itself drops (RabbitMQ 4's delivery limit of 20 on quorum queues) lands there.
 * - `<queue>.dlq`: a durable classic queue. It has no delivery limit, so inspecting dead letters
 *   repeatedly never drops one, and a message returned unacked goes back to its old position.
 */
export async function declareTopology(
  ch: Channel,
  names: QueueNames,
  type: QueueType,
): Promise<void> {
  await ch.assertQueue(names.deadLetter, { durable: true });
  await ch.assertQueue(names.work, workQueueOptions(names, type));
}

export function workQueueOptions(names: QueueNames, type: QueueType): Options.AssertQueue {
  return {
    durable: true,
    arguments: { ...(type === 'quorum' ? quorumArgs : {}), ...deadLetterTo(names.deadLetter) },
  };
}

/** A delay bucket: messages wait `delayMs` (message TTL), then dead-letter back to the work queue. */
export function retryQueueOptions(
  names: QueueNames,
  type: QueueType,
  delayMs: number,
): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      ...(type === 'quorum' ? quorumArgs : {}),
      ...deadLetterTo(names.work),
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
