import { describe, expect, it } from 'vitest';
import { createDownState } from '../../src/transport-kit/down-state.js';

describe('createDownState', () => {
  // Full jitter let a probe through right after a failed one: in a burst of 16 deliveries to a
  // file known locked, two reached for the lock (CI, paused-writer test: 14 of 16 failed fast).
  it('waits at least half the backoff ceiling between probes: one probe in a burst, never two back to back', () => {
    let t = 0;
    for (let run = 0; run < 200; run++) {
      const state = createDownState({ now: () => t });
      expect(state.admit()).toBe(true);
      state.failed();
      const admitted: number[] = [];
      for (let ms = 0; ms < 124; ms++) {
        t++;
        if (state.admit()) {
          admitted.push(ms);
          state.failed();
        }
      }
      expect(admitted).toEqual([]);
      t += 126; // 250 ms after the failure: the first ceiling has passed
      expect(state.admit()).toBe(true);
      state.failed();
      t += 249; // under half of the second ceiling (500 ms)
      expect(state.admit()).toBe(false);
      state.succeeded();
      expect(state.admit()).toBe(true);
    }
  });
});
