import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import { loggerSchema, nonNegative, parseConfig, positiveMs } from '../../src/kit.js';

const schema = z
  .object({
    queue: z.string().min(1),
    concurrency: z.number().int().positive().default(4),
    logger: loggerSchema.optional(),
  })
  .strict();

describe('parseConfig', () => {
  it('fills defaults, and a field set to undefined counts as not given', () => {
    expect(parseConfig('test options', schema, { queue: 'q', concurrency: undefined })).toEqual({
      queue: 'q',
      concurrency: 4,
    });
  });

  it('throws one ConfigError naming the component and every bad field, without the values', () => {
    const parse = () =>
      parseConfig('test options', schema, { queue: '', concurrency: 1.5, logger: 'secret-ish' });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(/^invalid test options: /);
    for (const field of ['queue', 'concurrency', 'logger']) expect(parse).toThrow(field);
    expect(parse).not.toThrow(/secret-ish/);
  });

  it('refuses unknown fields of a strict schema', () => {
    expect(() => parseConfig('test options', schema, { queue: 'q', queu: 'x' })).toThrow(/queu/);
  });
});

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
