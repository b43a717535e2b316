import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay, type RetryPolicy } from '../../src/worker/index.js';

const policy: RetryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 1000,
  maxDelayMs: 300_000,
  jitter: 'full',
};

describe('retry policy', () => {
  it('doubles the ceiling per attempt from baseDelayMs', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffCeiling(a, policy))).toEqual([
      1000, 2000, 4000, 8000, 16000,
    ]);
  });

  it('caps the ceiling at maxDelayMs, monotone and finite for any attempt', () => {
    let previous = 0;
    for (let attempt = 1; attempt <= 5000; attempt++) {
      const ceiling = backoffCeiling(attempt, policy);
      expect(ceiling).toBeGreaterThanOrEqual(previous);
      expect(ceiling).toBeLessThanOrEqual(policy.maxDelayMs);
      previous = ceiling;
    }
    expect(backoffCeiling(9, policy)).toBe(256_000);
    expect(backoffCeiling(10, policy)).toBe(300_000);
    expect(backoffCeiling(5000, policy)).toBe(300_000);
  });

  it('full jitter spreads the delay uniformly over [0, ceiling]', () => {
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(2000);
    expect(backoffDelay(3, policy, () => 0.999_999)).toBe(4000);
    expect(backoffDelay(20, policy, () => 0.25)).toBe(75_000);
    for (let i = 0; i < 200; i++) {
      const attempt = 1 + (i % 12);
      const d = backoffDelay(attempt, policy);
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(backoffCeiling(attempt, policy));
    }
  });

  it('keeps out-of-range random values inside the bounds', () => {
    expect(backoffDelay(2, policy, () => -1)).toBe(0);
    expect(backoffDelay(2, policy, () => 7)).toBe(2000);
  });

  it('without jitter the delay is the ceiling', () => {
    const none: RetryPolicy = { ...policy, jitter: 'none' };
    expect([1, 2, 10].map((a) => backoffDelay(a, none, () => 0))).toEqual([1000, 2000, 300_000]);
  });
});
