import { describe, expect, it } from 'vitest';
import { checkRetryDelay, nonNegative, positiveMs } from '../../src/kit.js';

describe('positiveMs and nonNegative', () => {
  it('return the value when it is in range and throw RangeError naming the argument otherwise', () => {
    expect(positiveMs('leaseMs', 1.5)).toBe(1.5);
    expect(nonNegative('limit', 0)).toBe(0);
    expect(() => positiveMs('leaseMs', 0)).toThrow(new RangeError('leaseMs must be > 0, got 0'));
    expect(() => positiveMs('leaseMs', Number.NaN)).toThrow(RangeError);
    expect(() => nonNegative('limit', -1)).toThrow(new RangeError('limit must be >= 0, got -1'));
    expect(() => nonNegative('olderThanMs', Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('checkRetryDelay', () => {
  it('accept what the transport declared and refuse the rest with RangeError', () => {
    expect(checkRetryDelay(0, 1000)).toBe(0);
    expect(checkRetryDelay(1000, 1000)).toBe(1000);
    expect(() => checkRetryDelay(1001, 1000)).toThrow(
      new RangeError('retry delayMs must be within 0..1000, got 1001'),
    );
    expect(() => checkRetryDelay(-1, 1000)).toThrow(RangeError);
    expect(() => checkRetryDelay(Number.NaN, 1000)).toThrow(RangeError);
  });
});
