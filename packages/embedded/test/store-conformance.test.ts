import { describeStoreConformance } from '@onceflow/conformance';
import { createEmbedded, type EmbeddedStore } from '../src/index.js';
import { tempDbPath } from './helpers.js';

// One real file for the run; each scenario opens its own connection to it (as another process
// would) and uses its own source names.
const path = tempDbPath();

const stores = new WeakMap<EmbeddedStore, () => Promise<void>>();
describeStoreConformance('embedded', {
  createStore: async () => {
    const embedded = createEmbedded({ path });
    await embedded.start();
    stores.set(embedded.inbox, () => embedded.close());
    return embedded.inbox;
  },
  close: async (store) => stores.get(store)?.(),
});
