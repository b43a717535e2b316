import { createMemoryBroker, createMemoryTransport } from '@onceflow/core/testing';
import { describeTransportConformance } from '@onceflow/conformance';

const broker = createMemoryBroker();

// A dedupe window short enough for the suite to wait out (the default is 5 minutes).
describeTransportConformance('memory', {
  createTransport: async ({ queue, lockMs }) =>
    createMemoryTransport({ broker, queue, lockMs, deliveryLimit: 10, dedupeWindowMs: 1000 }),
});

describeTransportConformance('memory-unordered-no-dedupe', {
  createTransport: async ({ queue, lockMs }) =>
    createMemoryTransport({
      broker,
      queue,
      lockMs,
      dedupeWindowMs: false,
      orderingPerKey: false,
      maxMessageBytes: 256 * 1024,
    }),
});
