import { vi } from 'vitest';
import type { Source } from '../../src/contracts/source.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createReceiver, type ReceiverConfig } from '../../src/receiver/index.js';
import { stripe } from '../../src/verify/stripe.js';
import { listen, STRIPE_SECRET } from './helpers.js';

/**
 * A receiver on a real node:http server over the real memory stores, with vitest spies around
 * every store method (they call through unless a test makes one fail).
 */
export async function startReceiver(
  options: { sources?: Record<string, Source>; config?: Partial<ReceiverConfig> } = {},
) {
  const inbox = createMemoryStore();
  const transport = createMemoryTransport();
  const metrics = createMetrics();
  const spies = {
    claim: vi.spyOn(inbox, 'claim'),
    markEnqueued: vi.spyOn(inbox, 'markEnqueued'),
    release: vi.spyOn(inbox, 'release'),
    recordConflict: vi.spyOn(inbox, 'recordConflict'),
    takeStale: vi.spyOn(inbox, 'takeStale'),
    publish: vi.spyOn(transport, 'publish'),
  };
  const receiver = createReceiver({
    sources: options.sources ?? { stripe: stripe({ secrets: [STRIPE_SECRET] }) },
    inbox,
    transport,
    metrics,
    ...options.config,
  });
  const server = await listen(receiver.nodeHandler(), receiver.serverOptions);
  return {
    inbox,
    transport,
    metrics,
    spies,
    receiver,
    server,
    url: `${server.url}/webhooks/stripe`,
    /** How many calls reached the inbox or the transport. */
    storeCalls: () => Object.values(spies).reduce((n, s) => n + s.mock.calls.length, 0),
    /** Value of a labelled counter. */
    count: async (
      name: 'webhooksReceived' | 'duplicatesSuppressed' | 'payloadConflicts' | 'relayRepublished',
      labels: Record<string, string>,
    ) => {
      const { values } = await metrics[name].get();
      const hit = values.find((v) =>
        Object.entries(labels).every(
          ([k, want]) => (v.labels as Record<string, unknown>)[k] === want,
        ),
      );
      return hit?.value ?? 0;
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
