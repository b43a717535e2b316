/**
 * `@onceflow/core/testing`: single-process memory stores for tests, examples and tools. They do
 * not support distributed operations: one process, state in the heap, gone on exit.
 */
export { type MemoryStore, type MemoryStoreOptions, createMemoryStore } from './memory/store.js';
export { type MemoryBroker, createMemoryBroker } from './memory/broker.js';
export {
  type MemoryTransport,
  type MemoryTransportOptions,
  createMemoryTransport,
} from './memory/transport.js';
