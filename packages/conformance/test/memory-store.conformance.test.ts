import { createMemoryStore } from '@onceflow/core/testing';
import { describeStoreConformance } from '@onceflow/conformance';

describeStoreConformance('memory', { createStore: async () => createMemoryStore() });
