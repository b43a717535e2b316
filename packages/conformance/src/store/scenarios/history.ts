import { HISTORY_LIMIT } from '@onceflow/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { retryScheduled } from '../steps.js';

/** The history is bounded: a record that keeps failing does not grow without end. */
export const historyScenarios: StoreScenario[] = [
  {
    name: 'history keeps the newest HISTORY_LIMIT changes, oldest first',
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const attempts = Math.ceil(HISTORY_LIMIT / 2) + 3; // two changes per attempt: past the limit
      const expected: { state: string; attempt: number }[] = [];
      for (let attempt = 1; attempt <= attempts; attempt++) {
        await retryScheduled(store, env, longLeaseMs, attempt);
        expected.push({ state: 'processing', attempt }, { state: 'retry-scheduled', attempt });
      }
      const r = await record(env);
      expect(r.history).toHaveLength(HISTORY_LIMIT);
      expect(r.history.map(({ state, attempt }) => ({ state, attempt }))).toEqual(
        expected.slice(-HISTORY_LIMIT),
      );
      expect(r.attempts).toBe(attempts);
      const times = r.history.map((h) => Date.parse(h.at));
      expect(times.every((t, i) => t >= (times[i - 1] ?? t))).toBe(true);
    },
  },
];
