import {
  createMemoryBroker,
  createMemoryInbox,
  createMemoryTransport,
} from '@onceflow/core/testing';
import { describeInboxConformance, describeTransportConformance } from '@onceflow/conformance';

const broker = createMemoryBroker();

describeTransportConformance('memory', {
  createTransport: async ({ queue }) => createMemoryTransport({ broker, queue }),
});

describeTransportConformance('memory-unordered-no-dedupe', {
  createTransport: async ({ queue }) =>
    createMemoryTransport({
      broker,
      queue,
      dedupeWindowMs: false,
      orderingPerKey: false,
      maxMessageBytes: 256 * 1024,
    }),
});

describeInboxConformance('memory', { createStore: async () => createMemoryInbox() });
