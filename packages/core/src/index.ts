// Envelope and wire format
export {
  type Envelope,
  type EnvelopeInit,
  createEnvelope,
  hashPayload,
  payloadJson,
} from './envelope.js';
export {
  WIRE_VERSION,
  type WireEnvelope,
  decodeEnvelope,
  encodeEnvelope,
  fromWire,
  toWire,
} from './wire.js';

// Errors
export * from './errors.js';

// Contracts
export type * from './contracts/transport.js';
export type * from './contracts/inbox.js';
export type * from './contracts/verifier.js';
export type * from './contracts/source.js';

// Senders: presets and verifiers
export * from './verify/index.js';

// Receiver and relay
export * from './receiver/index.js';
export { type Relay, type RelayOptions, createRelay } from './relay.js';

// Worker
export * from './worker/index.js';

// Transport kit for adapter authors
export * from './transport-kit/index.js';

// Memory stores (tests, single process)
export { type MemoryInbox, type MemoryInboxOptions, createMemoryInbox } from './memory/inbox.js';
export { type MemoryBroker, createMemoryBroker } from './memory/broker.js';
export {
  type MemoryTransport,
  type MemoryTransportOptions,
  createMemoryTransport,
} from './memory/transport.js';

// Observability
export { type Logger, DEFAULT_REDACT, createLogger, silentLogger } from './observability/logger.js';
export { type OnceflowMetrics, createMetrics } from './observability/metrics.js';
export { type StoreMonitorOptions, createStoreMonitor } from './observability/store-monitor.js';
