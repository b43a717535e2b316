import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import { loggerSchema, parseConfig } from '../../src/kit.js';

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
