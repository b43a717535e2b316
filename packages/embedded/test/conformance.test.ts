import { describeInboxConformance, describeTransportConformance } from '@onceflow/conformance';
import type { Transport } from '@onceflow/core';
import { createEmbedded, type EmbeddedInbox } from '../src/index.js';
import { tempDbPath } from './helpers.js';

// One file for the run; every scenario uses its own queue (or source) on it.
const path = tempDbPath();

describeTransportConformance('embedded', {
  // Each call is its own connection, as another process (or a restarted one) would open it;
  // closing the transport closes that connection.
  createTransport: async ({ queue }): Promise<Transport> => {
    const embedded = createEmbedded({ path, pollIntervalMs: 20 });
    const transport = embedded.transport(queue);
    return { ...transport, close: () => embedded.close() };
  },
});

const stores = new WeakMap<EmbeddedInbox, () => Promise<void>>();
describeInboxConformance('embedded', {
  createStore: async () => {
    const embedded = createEmbedded({ path });
    await embedded.start();
    stores.set(embedded.inbox, () => embedded.close());
    return embedded.inbox;
  },
  close: async (store) => stores.get(store)?.(),
});
