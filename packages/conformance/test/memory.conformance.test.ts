import type { MemoryBroker, MemoryTransportOptions } from '@onceflow/core/testing';
import { describeTransportConformance } from '@onceflow/conformance';

// The transport is loaded by the factory, not by this file: a transport that fails to load (or
// to be made) fails the suite's first test rather than its collection.
let broker: MemoryBroker | undefined;
const memoryTransport = async (options: MemoryTransportOptions) => {
  const { createMemoryBroker, createMemoryTransport } = await import('@onceflow/core/testing');
  broker ??= createMemoryBroker();
  return createMemoryTransport({ ...options, broker });
};

// A dedupe window short enough for the suite to wait out (the default is 5 minutes).
describeTransportConformance('memory', {
  createTransport: async ({ queue, lockMs }) =>
    memoryTransport({ queue, lockMs, deliveryLimit: 10, dedupeWindowMs: 1000 }),
});

describeTransportConformance('memory-unordered-no-dedupe', {
  createTransport: async ({ queue, lockMs }) =>
    memoryTransport({
      queue,
      lockMs,
      dedupeWindowMs: false,
      orderingPerKey: false,
      maxMessageBytes: 256 * 1024,
    }),
});
