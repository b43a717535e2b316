/**
 * `@onceflow/core/kit`: what an adapter author needs besides the broker client, so an adapter
 * translates and nothing more. The contract it implements (`Transport`, `Delivery`, …) is typed in
 * `@onceflow/core`; its docs live on those types.
 */

// Wire format v1: the same bytes on every broker
export {
  type WireEnvelope,
  WIRE_VERSION,
  decodeEnvelope,
  encodeEnvelope,
  fromWire,
  toWire,
} from './wire.js';

// Claim-check: the event's reference in place of its payload
export {
  type WireReference,
  CLAIM_CHECK_HEADER,
  CLAIM_CHECK_VERSION,
  claimCheckReference,
  isClaimCheckReference,
} from './wire.js';
export { hashPayload } from './envelope.js';
export {
  DECODE_ERROR_HEADER,
  UNDECODABLE,
  decodeDelivery,
} from './transport-kit/decode-delivery.js';
export { assertEncodesWithin, encodeWithinLimit } from './transport-kit/message-size.js';
// Wire formats: onceflow's v1, or CloudEvents binary mode (the adapter's `wireFormat`)
export {
  type EncodedMessage,
  type WireFormat,
  decodeMessage,
  encodeMessage,
  wireFormatSchema,
} from './transport-kit/wire-format.js';
export {
  type BinaryAttributes,
  type CloudEventsBinding,
  AMQP_BINDING,
  KAFKA_BINDING,
  binaryHeaders,
  decodeBinary,
  encodeBinary,
  isBinaryCloudEvent,
} from './cloudevents/binary.js';
export { dedupeKeyOf } from './transport-kit/dedupe-key.js';

// Event-record stores: the same cursor and trace id on every store
export {
  type RecordCursor,
  decodeCursor,
  encodeCursor,
  isAfter,
  pageSize,
} from './records/cursor.js';
export { traceIdOf } from './records/trace-id.js';
export { completedNote } from './stale/note.js';

// Stale-event guards (applyIfNewer in each SQL store): the same checks, order and note
export { type Position, staleNote, toPosition } from './stale/position.js';

// Retention in the stores: batched deletes paced so claims keep their latency
export { type PacedBatchesOptions, purgeInPacedBatches } from './retention/paced-batches.js';

// Outbox stores: the envelope of an added event, its id chosen once
export { outboxEnvelope } from './outbox/event.js';

// Settlement and the delivery contract
export {
  type DeliverySettlement,
  type RetryOptions,
  type SettlementOutcome,
  type SettlementRecorder,
  SETTLED,
  createSettlement,
} from './transport-kit/settlement.js';
export {
  type DeliveryInit,
  type RunDeliveryOptions,
  runDelivery,
} from './transport-kit/run-delivery.js';

// Concurrency, subscriptions, locks and broker errors
export { type InFlight, createInFlight } from './transport-kit/in-flight.js';
export { parseConsumeOptions } from './transport-kit/consume-options.js';
export { type Subscriptions, createSubscriptions } from './transport-kit/subscriptions.js';
export { type LockWatch, type LockWatchOptions, watchLock } from './transport-kit/lock-watch.js';
export { type BrokerCallOptions, brokerCall, brokerError } from './transport-kit/broker-call.js';
export { type Backoff, type BackoffOptions, createBackoff } from './transport-kit/backoff.js';
export {
  DEFAULT_PUBLISH_TIMEOUT_MS,
  type PublishDeadline,
  type PublishDeadlineOptions,
  publishDeadline,
  publishTimeoutSchema,
  withDeadline,
} from './transport-kit/publish-deadline.js';
export {
  type DownState,
  type DownStateOptions,
  createDownState,
} from './transport-kit/down-state.js';
export {
  type Lifecycle,
  type LifecycleOptions,
  createLifecycle,
} from './transport-kit/lifecycle.js';

// Config and call arguments: the same checks and messages in every component
export { type SameFields, loggerSchema, parseConfig } from './transport-kit/parse-config.js';
export {
  checkRetryDelay,
  nonNegative,
  positiveMs,
} from './transport-kit/arguments.js';

// Broker-message metadata
export {
  type BrokerDeadLetterFields,
  ONCEFLOW_HEADERS,
  deadLetterHeaders,
  parseErrorInfo,
  readDeadLetterHeaders,
} from './transport-kit/headers.js';
