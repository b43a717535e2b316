/**
 * The transport kit: what every adapter needs besides its broker client, so adapters translate
 * and nothing more. Settlement idempotency and the "unsettled is retried" rule live in
 * `runDelivery`; concurrency and draining in `createInFlight`; header names in `ONCEFLOW_HEADERS`.
 */

// Settlement and the delivery contract
export {
  type DeliverySettlement,
  type RetryOptions,
  type SettlementOutcome,
  type SettlementRecorder,
  createSettlement,
} from './settlement.js';
export { type DeliveryInit, type RunDeliveryOptions, runDelivery } from './run-delivery.js';

// Concurrency and draining
export { type InFlight, createInFlight } from './in-flight.js';
export { parseConsumeOptions } from './consume-options.js';
export { type Subscriptions, createSubscriptions } from './subscriptions.js';
export { type LockWatch, type LockWatchOptions, watchLock } from './lock-watch.js';
export { type BrokerCallOptions, brokerCall } from './broker-call.js';

// Broker-message metadata and size
export {
  type DeadLetterFields,
  ONCEFLOW_HEADERS,
  deadLetterHeaders,
  parseErrorInfo,
  readDeadLetterHeaders,
} from './headers.js';
export { encodeWithinLimit } from './message-size.js';
export { dedupeKeyOf } from './dedupe-key.js';
