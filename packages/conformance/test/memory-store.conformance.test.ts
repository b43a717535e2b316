import { createMemoryStore } from '@onceflow/core/testing';
import { describeStoreConformance } from '@onceflow/conformance';

describeStoreConformance('memory', { createStore: async () => createMemoryStore() });

// A custom store without InboxOutcomes declares it, and the suite checks the worker refuses it.
describeStoreConformance('memory without InboxOutcomes', {
  createStore: async () => {
    const { markProcessed: _, isProcessed: __, ...store } = createMemoryStore();
    return store;
  },
  inboxOutcomes: false,
});
