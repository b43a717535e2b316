import { describeTransportConformance } from '@onceflow/conformance';
import type { Transport } from '@onceflow/core';
import { createEmbedded } from '../src/index.js';
import { tempDbPath } from './helpers.js';

// One file for the run; every scenario uses its own queue (or source) on it.
const path = tempDbPath();

describeTransportConformance('embedded', {
  // Each call is its own connection, as another process (or a restarted one) would open it;
  // closing the transport closes that connection.
  createTransport: async ({ queue, lockMs }): Promise<Transport> => {
    const embedded = createEmbedded({ path, pollIntervalMs: 20, lockMs });
    const transport = embedded.transport(queue);
    return { ...transport, close: () => embedded.close() };
  },
});

// The store suite (inbox and event record): store-conformance.test.ts.
