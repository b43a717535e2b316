import { type Delivery, errorLogFields, eventLogFields } from '@onceflow/core';
import { runDelivery } from '@onceflow/core/kit';
import type { Message } from 'amqplib';
import { type ConsumerChannel, type DeliveryDeps, Settle } from './delivery.js';
import { fromDeadLetterMessage, toDeadLetterMessage } from './marshal.js';

/**
 * Handles one message of `<queue>.dlq`, the broker's dead-letter destination, as an ordinary
 * delivery for `consumeDeadLetters`: the envelope as published, `attempt` = the deliveries it had
 * on the work queue (it does not grow while the message waits here). `ack` removes it; `retry`
 * puts it back on the dead-letter queue through a delay bucket `<queue>.dlq.retry.<ms>` (straight
 * back for 0) with its dead-letter headers unchanged. Nothing here has a delivery limit.
 */
export function receiveDeadLetter(
  deps: DeliveryDeps,
  handler: (delivery: Delivery) => Promise<void>,
): (on: ConsumerChannel, msg: Message) => Promise<void> {
  const dlq = deps.names.deadLetter;
  return async (on, msg) => {
    const letter = fromDeadLetterMessage(msg, deps.deliveryLimit);
    const settle = new Settle(deps, on, msg, dlq, letter.envelope.id);
    await runDelivery(
      handler,
      {
        envelope: letter.envelope,
        attempt: Math.max(1, letter.fields.attempts),
        signal: on.signal,
        ack: () => settle.ack(),
        async retry({ delayMs }) {
          const queue = await deps.retryQueue(dlq, delayMs);
          await settle.replace(toDeadLetterMessage(queue, letter, letter.fields, deps.wireFormat));
        },
      },
      {
        onError: (err) =>
          deps.logger.warn(
            {
              ...eventLogFields(letter.envelope, Math.max(1, letter.fields.attempts)),
              ...errorLogFields(err),
              queue: dlq,
            },
            'settlement not recorded',
          ),
      },
    );
  };
}
