// Memory stores: single process, for tests, examples and tools. No distributed operations.
export { type MemoryInbox, type MemoryInboxOptions, createMemoryInbox } from './inbox.js';
export { type MemoryBroker, createMemoryBroker } from './broker.js';
export {
  type MemoryTransport,
  type MemoryTransportOptions,
  createMemoryTransport,
} from './transport.js';
