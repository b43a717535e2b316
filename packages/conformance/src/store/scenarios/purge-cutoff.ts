import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { completed } from '../steps.js';

/** Retention removes what was received strictly before the cutoff. */
export const purgeCutoffScenarios: StoreScenario[] = [
  {
    name: 'purge keeps a record received at the very cutoff instant and removes it once the cutoff is a millisecond later',
    async run({ store, envelope, longLeaseMs }) {
      const receivedAt = '2001-02-03T04:05:06.789Z';
      const env = envelope({ receivedAt });
      await completed(store, env, longLeaseMs);
      await store.purge({ olderThan: new Date(receivedAt) });
      expect(await store.get(env.source, env.id), 'received at the cutoff: kept').not.toBe(
        undefined,
      );
      await store.purge({ olderThan: new Date(Date.parse(receivedAt) + 1) });
      expect(await store.get(env.source, env.id), 'received before the cutoff: removed').toBe(
        undefined,
      );
    },
  },
];
