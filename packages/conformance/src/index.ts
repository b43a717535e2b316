// The suites: one call per adapter or store
export { describeTransportConformance } from './transport/describe.js';
export { type StoreConformanceOptions, describeStoreConformance } from './store/describe.js';
export type {
  TransportConformanceOptions,
  TransportConformanceTimeouts,
} from './options.js';

// Test helpers for adapter authors' own tests
export {
  type HandlerSpy,
  type SpyBehaviour,
  type SpyEvent,
  type SpyEventKind,
  type SpyWaitKind,
  createHandlerSpy,
} from './spy.js';
export {
  ConformanceTimeoutError,
  type Gate,
  createGate,
  sleep,
  waitUntil,
  within,
} from './wait.js';
export { NON_UTF8_BYTES, asciiBytes, sameBytes, testEnvelope } from './envelopes.js';
export { handleOnce } from './handle-once.js';
export {
  type BrokerDownOptions,
  type SenderAnswer,
  type SenderBurst,
  type WorkerWait,
  expectAnswersWhileBrokerDown,
  startReceiverServer,
  workerWaitsForBroker,
} from './broker-down.js';
export { type TransportFixture, createTransportFixture } from './transport/fixture.js';
export { type TcpProxy, type TcpProxyOptions, startTcpProxy } from './tcp-proxy.js';

// Capability records (read by scripts/capability-matrix.mjs)
export {
  type CapabilityName,
  type ConformanceRecord,
  type ScenarioRecord,
  type ScenarioStatus,
  defaultRecordDir,
} from './matrix.js';
