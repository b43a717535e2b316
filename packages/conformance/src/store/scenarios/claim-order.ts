import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { sleep, waitUntil } from '../../wait.js';
import type { StoreScenario } from '../scenario.js';
import { claimed } from '../steps.js';

/** The relay re-publishes the claims it takes in the order the receiver accepted them. */
export const claimOrderScenarios: StoreScenario[] = [
  {
    name: 'takeStale takes stale claims oldest claim first, across sources',
    async run({ store, source, shortLeaseMs, longLeaseMs }) {
      const [x, y] = [`${source}-x`, `${source}-y`];
      // Claimed x, y, x: the claim order interleaves the two sources.
      const order = [
        testEnvelope({ source: x }),
        testEnvelope({ source: y }),
        testEnvelope({ source: x }),
      ];
      for (const env of order) {
        const at = Date.now();
        await claimed(store, env, shortLeaseMs);
        await waitUntil(() => Date.now() > at + 2, { timeoutMs: 1000, message: 'the clock' });
      }
      await sleep(shortLeaseMs + 50); // let the leases run out
      const taken = await store.takeStale({ olderThanMs: 0, leaseMs: longLeaseMs, limit: 1000 });
      const mine = taken.filter((c) => c.envelope.source === x || c.envelope.source === y);
      expect(
        mine.map((c) => c.envelope.id),
        'oldest claim first',
      ).toEqual(order.map((e) => e.id));
    },
  },
];
