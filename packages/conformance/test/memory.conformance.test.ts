import { createMemoryBroker, createMemoryTransport } from '@onceflow/core/testing';
import { describeTransportConformance } from '@onceflow/conformance';

const broker = createMemoryBroker();

describeTransportConformance('memory', {
  createTransport: async ({ queue, lockMs }) =>
    createMemoryTransport({ broker, queue, lockMs, deliveryLimit: 10 }),
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
