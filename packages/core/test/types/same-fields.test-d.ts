import { describe, expectTypeOf, it } from 'vitest';
import type { SameFields } from '../../src/transport-kit/parse-config.js';

type Schema = { a: string; b?: number | undefined };

describe('SameFields: a config interface checked against its schema', () => {
  it('is true for the same fields, readonly aside', () => {
    expectTypeOf<
      SameFields<Schema, { readonly a: string; readonly b?: number | undefined }>
    >().toEqualTypeOf<true>();
  });
  it('is false for a field missing from either side, even an optional one', () => {
    expectTypeOf<SameFields<Schema, { a: string }>>().toEqualTypeOf<false>();
    expectTypeOf<SameFields<{ a: string }, Schema>>().toEqualTypeOf<false>();
  });
  it('is false for another type or another optionality', () => {
    expectTypeOf<SameFields<Schema, { a: string; b?: string }>>().toEqualTypeOf<false>();
    expectTypeOf<SameFields<Schema, { a?: string; b?: number }>>().toEqualTypeOf<false>();
    expectTypeOf<SameFields<Schema, { a: string; b: number }>>().toEqualTypeOf<false>();
  });
});
