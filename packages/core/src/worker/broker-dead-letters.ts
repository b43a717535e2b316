import type { RecordStore } from '../contracts/records.js';
import type { BrokerDeadLetters, Delivery, Transport } from '../contracts/transport.js';
import { errorLogFields, eventLogFields } from '../observability/event-fields.js';
import type { Logger } from '../observability/logger.js';

/** The note on a record's history entry for a dead letter that came from the broker. */
export const BROKER_DEAD_LETTER_NOTE = 'broker dead-letter';

/** The optional ability, detected. */
export function hasBrokerDeadLetters(
  transport: Transport,
): transport is Transport & BrokerDeadLetters {
  return typeof (transport as Partial<BrokerDeadLetters>).consumeDeadLetters === 'function';
}

/**
 * The handler the worker subscribes to a transport's own dead-letter destination with: each
 * message (one the broker gave up on past its `deliveryLimit`, e.g. a crash loop, or one the
 * worker could not record while its store was down) becomes a dead letter in the event record,
 * with the note `broker dead-letter`, and is then acked. If the record cannot be written the
 * message stays with the broker and comes back after `retryMs`. An event the record already
 * completed is acked without a dead letter (`deadLetter` never overwrites a completed record).
 *
 * The attempts recorded are the transport's `deliveryLimit`, the deliveries the broker made
 * before it gave up: the dead-letter delivery's own `attempt` also counts the times this
 * handler could not record it.
 */
export function recordBrokerDeadLetter(deps: {
  readonly records: RecordStore;
  readonly consumer: string;
  readonly logger: Logger;
  readonly retryMs: number;
  readonly deliveryLimit: number | false;
}): (delivery: Delivery) => Promise<void> {
  return async (delivery) => {
    const { envelope } = delivery;
    const attempts = deps.deliveryLimit === false ? delivery.attempt : deps.deliveryLimit;
    const fields = eventLogFields(envelope, attempts);
    try {
      await deps.records.deadLetter(envelope, undefined, {
        reason: `delivery limit exceeded after ${attempts} deliveries`,
        attempts,
        actor: deps.consumer,
        note: BROKER_DEAD_LETTER_NOTE,
      });
    } catch (err) {
      deps.logger.error(
        { ...fields, ...errorLogFields(err) },
        'could not record a broker dead letter: it stays on the broker',
      );
      await delivery.retry({ delayMs: deps.retryMs });
      return;
    }
    deps.logger.warn(fields, 'dead-lettered by the broker: delivery limit exceeded');
    await delivery.ack();
  };
}
