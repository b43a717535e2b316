import { describe, expect, it } from 'vitest';
import { createBackoff } from '../../src/kit.js';

describe('createBackoff', () => {
  it('doubles the ceiling per failure up to maxDelayMs, and starts over after reset', () => {
    const backoff = createBackoff({ baseDelayMs: 100, maxDelayMs: 500, random: () => 0.999999 });
    expect([backoff.next(), backoff.next(), backoff.next(), backoff.next()]).toEqual([
      100, 200, 400, 500,
    ]);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('spreads each delay over [0, ceiling] (full jitter)', () => {
    const backoff = createBackoff({ baseDelayMs: 1000, maxDelayMs: 1000, random: () => 0.25 });
    expect(backoff.next()).toBe(250);
    const delays = Array.from({ length: 200 }, () =>
      createBackoff({ baseDelayMs: 1000, maxDelayMs: 1000 }).next(),
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1000);
    expect(new Set(delays).size).toBeGreaterThan(1);
  });
});
