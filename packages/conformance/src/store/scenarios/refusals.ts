import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired } from '../steps.js';

/** Arguments a store cannot record are refused with a `UsageError`, and nothing changes. */
export const refusalScenarios: StoreScenario[] = [
  {
    name: 'scheduleRetry refuses a nextAttemptAt that is not a date with a UsageError and the lease stays held',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const token = await acquired(store, env, { leaseMs: longLeaseMs });
      await expect(
        Promise.resolve().then(() =>
          store.scheduleRetry(env.source, env.id, token, { nextAttemptAt: new Date(Number.NaN) }),
        ),
      ).rejects.toMatchObject({ code: 'USAGE' });
      expect(await record(env)).toMatchObject({ state: 'processing' });
      expect(await store.extend(env.source, env.id, token, longLeaseMs), 'still the owner').toBe(
        true,
      );
    },
  },
];
