import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoFormatter } from '../../src/iso-time.js';

describe('isoFormatter', () => {
  it('gives what toISOString gives, across seconds, signs and the Date range edges', () => {
    const iso = isoFormatter();
    const edges = [0, 1, 999, 1000, -1, -999, -1000, -1001, -1.5, 1.5, 8.64e15, -8.64e15];
    for (const ms of edges) expect(iso(ms)).toBe(new Date(ms).toISOString());
    fc.assert(
      fc.property(fc.array(fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true })), (times) => {
        for (const ms of times) expect(iso(ms)).toBe(new Date(ms).toISOString());
      }),
    );
    // Calls in the same second reuse its prefix: still exact.
    const base = Date.UTC(2026, 11, 1, 15, 4, 5);
    for (let ms = base; ms < base + 2000; ms += 7) expect(iso(ms)).toBe(new Date(ms).toISOString());
  });

  it('throws RangeError where toISOString does', () => {
    const iso = isoFormatter();
    for (const ms of [Number.NaN, 8.64e15 + 1, Number.POSITIVE_INFINITY]) {
      expect(() => new Date(ms).toISOString()).toThrow(RangeError);
      expect(() => iso(ms)).toThrow(RangeError);
    }
  });
});
