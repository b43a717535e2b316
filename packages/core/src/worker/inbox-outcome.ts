import type { Inbox, InboxOutcomes } from '../contracts/inbox.js';
import type { RecordStore } from '../contracts/records.js';
import type { Delivery } from '../contracts/transport.js';
import { ConfigError } from '../errors.js';
import { errorLogFields, eventLogFields } from '../observability/event-fields.js';
import type { Logger } from '../observability/logger.js';
import { hasInboxOutcomes, INBOX_HEADER, storeIdOf } from '../contracts/inbox.js';

/** The receiver's inbox, when it is another store than the worker's `records`. */
export type OutcomeInbox = Inbox & InboxOutcomes;

/**
 * The shapes `WorkerConfig.inbox` supports, checked at `createWorker`. Throws `ConfigError`:
 * - an inbox without `InboxOutcomes`: it could never learn that an event is done;
 * - with `claimCheck`: references are loaded from `records`, which does not hold what another
 *   store's receiver claimed.
 * Returns the inbox to tell, or undefined when there is none to tell (none given, or the
 * `records` store itself, which already knows: the same object, or a store with the same
 * `storeId`, another instance on the same rows).
 */
export function outcomeInbox(
  inbox: unknown,
  records: RecordStore,
  claimCheck: boolean,
): InboxOutcomes | undefined {
  if (inbox === undefined || inbox === records) return undefined;
  const id = storeIdOf(inbox);
  if (id !== undefined && id === storeIdOf(records)) return undefined;
  if (!hasInboxOutcomes(inbox)) {
    throw new ConfigError(
      'invalid worker config: inbox has no markProcessed (InboxOutcomes), so it would keep every ' +
        'event enqueued for good: give the worker the receiver inbox as its records, or use a ' +
        'store with InboxOutcomes (memory, embedded, PostgreSQL, Redis)',
    );
  }
  if (claimCheck) {
    throw new ConfigError(
      'invalid worker config: claimCheck loads each event from records, which does not hold ' +
        "what the receiver's inbox claimed: with claimCheck, give the worker the receiver's " +
        'inbox as its records (and leave inbox out)',
    );
  }
  return inbox;
}

/**
 * The delivery whose `ack()` first tells `inbox` the event is done (`markProcessed`), then acks:
 * every ack of the worker is an event it is done with (completed, a duplicate of a finished one,
 * dead-lettered in the record, dropped as an unknown type). The broker keeps the message until
 * the inbox knows, so a crash between the record's write and the mark is repaired by the
 * redelivery (the record answers `processed` or `dead-lettered`, and the mark is made then). When
 * the inbox fails to answer, the delivery is retried after `retryMs` instead of acked (the
 * attempt's count and log line stand; its redelivery is counted as a duplicate).
 */
export function withInboxOutcome<D extends Delivery>(
  delivery: D,
  inbox: InboxOutcomes,
  deps: { readonly logger: Logger; readonly retryMs: number },
): D {
  const ack = async (): Promise<void> => {
    const { source, id } = delivery.envelope;
    try {
      await inbox.markProcessed(source, id);
    } catch (err) {
      deps.logger.warn(
        { ...eventLogFields(delivery.envelope, delivery.attempt), ...errorLogFields(err) },
        'could not mark the event processed in the inbox: the broker delivers it again',
      );
      await delivery.retry({ delayMs: deps.retryMs });
      return;
    }
    await delivery.ack();
  };
  return new Proxy(delivery, {
    get(target, prop) {
      if (prop === 'ack') return ack;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Distinct foreign inboxes reported at most, so a misrouted flood logs a bounded number of lines. */
const MAX_REPORTED = 16;

/**
 * Notices a forgotten `inbox` option: a delivery stamped by its receiver (`INBOX_HEADER`) with an
 * inbox that is neither `records` nor the worker's `inbox` was claimed in a store nobody tells of
 * outcomes, which keeps it enqueued for good (its stats, the backlog gauges and alerts, its purge).
 * Logs one error per such inbox and lets the delivery through: the event itself is handled
 * correctly, only that inbox's view is wrong, so this never stops a worker. Undefined (nothing to
 * check) when `records`, or a given `inbox`, has no `storeId` to compare with.
 */
export function foreignInboxCheck(
  records: RecordStore,
  inbox: unknown,
  logger: Logger,
): ((delivery: Delivery) => void) | undefined {
  const own = storeIdOf(records);
  const told = storeIdOf(inbox);
  if (own === undefined || (inbox !== undefined && told === undefined)) return undefined;
  const known = new Set([own, ...(told === undefined ? [] : [told])]);
  const reported = new Set<string>();
  return ({ envelope, attempt }) => {
    const from = envelope.headers[INBOX_HEADER];
    if (from === undefined || known.has(from) || reported.has(from)) return;
    if (reported.size >= MAX_REPORTED) return;
    reported.add(from);
    logger.error(
      { ...eventLogFields(envelope, attempt), inbox: from, records: own },
      `this event was claimed in the receiver inbox ${from}, which is not this worker's records ` +
        `(${own}) and not its inbox option: that inbox is never told the event is processed and ` +
        "reports it enqueued for good; give the worker the receiver's inbox as its inbox option",
    );
  };
}

/** A consume handler of the worker's. */
type DeliveryHandler = (delivery: Delivery) => Promise<void>;

/**
 * What the worker wraps its consume handlers in (the work queue's and the broker's dead letters')
 * for the receiver's inbox: each delivery checked by `foreignInboxCheck`, and, with `outcomes`,
 * given to the handler as `withInboxOutcome`. The handler itself when there is nothing to do.
 */
export function receiverInboxHook(deps: {
  readonly records: RecordStore;
  readonly inbox: unknown;
  readonly outcomes: InboxOutcomes | undefined;
  readonly logger: Logger;
  readonly retryMs: number;
}): (handle: DeliveryHandler) => DeliveryHandler {
  const { outcomes, logger, retryMs } = deps;
  const check = foreignInboxCheck(deps.records, deps.inbox, logger);
  return (handle) => {
    const marked: DeliveryHandler =
      outcomes === undefined
        ? handle
        : (d) => handle(withInboxOutcome(d, outcomes, { logger, retryMs }));
    if (check === undefined) return marked;
    return (d) => {
      check(d);
      return marked(d);
    };
  };
}
