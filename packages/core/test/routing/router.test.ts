import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { matches, overlap, parsePattern } from '../../src/routing/pattern.js';
import { compileRoutes } from '../../src/routing/router.js';

const routes = (...types: string[]) => compileRoutes(types.map((type) => ({ type })));
const routed = (r: ReturnType<typeof routes>, source: string, type: string) =>
  r.route(source, type)?.type;

describe('compileRoutes', () => {
  it('keeps a plain type as before: that type from any source', () => {
    const r = routes('invoice.paid');
    expect(routed(r, 'stripe', 'invoice.paid')).toBe('invoice.paid');
    expect(routed(r, 'other', 'invoice.paid')).toBe('invoice.paid');
    expect(routed(r, 'stripe', 'invoice.paid.late')).toBeUndefined();
  });

  it('matches source and type patterns; a trailing * takes one or more segments', () => {
    const r = routes('stripe:invoice.*', '*:payment.*', 'github:*');
    expect(routed(r, 'stripe', 'invoice.paid')).toBe('stripe:invoice.*');
    expect(routed(r, 'stripe', 'invoice.payment.failed')).toBe('stripe:invoice.*');
    expect(routed(r, 'stripe', 'invoice')).toBeUndefined();
    expect(routed(r, 'shop', 'invoice.paid')).toBeUndefined();
    expect(routed(r, 'shop', 'payment.captured')).toBe('*:payment.*');
    expect(routed(r, 'github', 'push')).toBe('github:*');
    expect(routed(r, 'github', 'issues.opened')).toBe('github:*');
  });

  it('an inner * takes exactly one segment', () => {
    const r = routes('invoice.*.failed');
    expect(routed(r, 's', 'invoice.payment.failed')).toBe('invoice.*.failed');
    expect(routed(r, 's', 'invoice.failed')).toBeUndefined();
    expect(routed(r, 's', 'invoice.a.b.failed')).toBeUndefined();
  });

  it('exact type beats wildcard, more literals beat fewer, a named source beats *', () => {
    const r = routes('*', 'stripe:*', '*:invoice.*', 'stripe:invoice.*', '*:invoice.paid');
    expect(routed(r, 'stripe', 'invoice.paid')).toBe('*:invoice.paid');
    expect(routed(r, 'stripe', 'invoice.voided')).toBe('stripe:invoice.*');
    expect(routed(r, 'shop', 'invoice.voided')).toBe('*:invoice.*');
    expect(routed(r, 'stripe', 'charge.succeeded')).toBe('stripe:*');
    expect(routed(r, 'shop', 'charge.succeeded')).toBe('*');
    expect(r.patterns).toEqual([
      '*:invoice.paid',
      'stripe:invoice.*',
      '*:invoice.*',
      'stripe:*',
      '*',
    ]);
    const named = routes('invoice.paid', 'stripe:invoice.paid');
    expect(routed(named, 'stripe', 'invoice.paid')).toBe('stripe:invoice.paid');
    expect(routed(named, 'shop', 'invoice.paid')).toBe('invoice.paid');
  });

  it('refuses two equally specific patterns that one event could match', () => {
    expect(() => routes('invoice.paid', 'invoice.paid')).toThrow(ConfigError);
    expect(() => routes('invoice.paid', '*:invoice.paid')).toThrow(ConfigError);
    expect(() => routes('invoice.*', '*.paid')).toThrow(/equally specific/);
    expect(() => routes('stripe:invoice.*.failed', 'stripe:invoice.payment.*')).toThrow(
      ConfigError,
    );
    // Equally specific but disjoint: fine.
    expect(() => routes('stripe:invoice.*', 'shop:invoice.*', 'a.*', 'b.*')).not.toThrow();
    expect(() => routes('a.*.c', 'a.*')).not.toThrow(); // 2 literals beat 1
  });

  it('refuses malformed patterns', () => {
    for (const bad of ['', 'stripe:', ':x', 'in*voice', 'a..b', 'str*pe:x']) {
      expect(() => routes(bad), bad).toThrow(ConfigError);
    }
  });

  it('agrees with a brute-force scan (property)', () => {
    const seg = fc.constantFrom('a', 'b', '*');
    const pattern = fc
      .tuple(fc.constantFrom('', 's:', 't:', '*:'), fc.array(seg, { minLength: 1, maxLength: 3 }))
      .map(([src, segs]) => `${src}${segs.join('.')}`);
    const event = fc.tuple(
      fc.constantFrom('s', 't'),
      fc.array(fc.constantFrom('a', 'b'), { minLength: 1, maxLength: 4 }).map((s) => s.join('.')),
    );
    fc.assert(
      fc.property(fc.uniqueArray(pattern, { maxLength: 5 }), event, (types, [source, type]) => {
        let router: ReturnType<typeof routes>;
        try {
          router = routes(...types);
        } catch {
          // A tie: some pair of equal precedence overlaps.
          return;
        }
        const hits = types.map(parsePattern).filter((p) => matches(p, source, type));
        const got = router.route(source, type)?.type;
        if (hits.length === 0) {
          expect(got).toBeUndefined();
          return;
        }
        // The winner matches, and no other match ranks above it.
        expect(hits.map((h) => h.text)).toContain(got);
        for (const h of hits) expect(overlap(h, parsePattern(got!))).toBe(true);
        expect(router.patterns.indexOf(got!)).toBeLessThanOrEqual(
          Math.min(...hits.map((h) => router.patterns.indexOf(h.text))),
        );
      }),
    );
  });
});
