import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired } from '../steps.js';

/** `stats` answers what the receiver accepted: a record no receiver claimed is not waiting on it. */
export const unclaimedStatsScenarios: StoreScenario[] = [
  {
    name: 'stats count an event that never passed a receiver as neither pending nor enqueued, and as processed once completed',
    async run({ store, envelope, longLeaseMs }) {
      const env = envelope();
      const before = await store.stats();
      const token = await acquired(store, env, { leaseMs: longLeaseMs });
      const during = await store.stats();
      expect({
        pending: during.pending - before.pending,
        enqueued: during.enqueued - before.enqueued,
      }).toEqual({ pending: 0, enqueued: 0 });
      await store.complete(env.source, env.id, token);
      const after = await store.stats();
      expect(after.processed - before.processed).toBe(1);
    },
  },
];
