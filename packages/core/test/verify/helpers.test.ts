import { describe, expect, it } from 'vitest';
import { SignatureError } from '../../src/errors.js';
import {
  anyDigestMatches,
  decodeDigest,
  hmacDigest,
  secretEquals,
} from '../../src/verify/crypto.js';
import { canonicalJson, field, idField } from '../../src/verify/json.js';
import { assertFresh, parseUnixSeconds } from '../../src/verify/request.js';

describe('verify helpers', () => {
  it('feeds HMAC parts in order, bytes untouched', () => {
    const bytes = new Uint8Array([0xff, 0x00, 0xc3]);
    const whole = hmacDigest('k', [Buffer.concat([Buffer.from('1.'), bytes])]);
    expect(hmacDigest('k', ['1.', bytes]).equals(whole)).toBe(true);
  });

  it('decodes only well-formed digests', () => {
    expect(decodeDigest('0aff', 'hex')).toEqual(Buffer.from([0x0a, 0xff]));
    expect(decodeDigest('0af', 'hex')).toBeUndefined();
    expect(decodeDigest('zz', 'hex')).toBeUndefined();
    expect(decodeDigest('', 'base64')).toBeUndefined();
    expect(decodeDigest('a b', 'base64')).toBeUndefined();
  });

  it('matches any expected digest against any received one, wrong lengths never matching', () => {
    const a = hmacDigest('a', ['x']);
    const b = hmacDigest('b', ['x']);
    expect(anyDigestMatches([a, b], [undefined, b])).toBe(true);
    expect(anyDigestMatches([a], [b, undefined, a.subarray(0, 16)])).toBe(false);
    expect(anyDigestMatches([a], [])).toBe(false);
  });

  it('compares secrets of any length', () => {
    expect(secretEquals('state', 'state')).toBe(true);
    expect(secretEquals('state', 'stat')).toBe(false);
    expect(secretEquals('state', '')).toBe(false);
  });

  it('checks timestamps strictly and symmetrically', () => {
    expect(parseUnixSeconds('1700000000', 't')).toBe(1_700_000_000);
    for (const bad of ['', '-1', '1e9', ' 1', '1.5'])
      expect(() => parseUnixSeconds(bad, 't')).toThrow(SignatureError);
    const now = new Date(1_700_000_000_000);
    expect(() => assertFresh(1_700_000_300, now, 300)).not.toThrow();
    expect(() => assertFresh(1_699_999_700, now, 300)).not.toThrow();
    expect(() => assertFresh(1_700_000_301, now, 300)).toThrow(SignatureError);
    expect(() => assertFresh(1_699_999_699, now, 300)).toThrow(SignatureError);
  });

  it('reads dotted paths and canonicalises JSON', () => {
    const value = { b: [{ y: 1, x: 'é' }], a: { c: null, d: undefined } };
    expect(field(value, 'b')).toEqual([{ y: 1, x: 'é' }]);
    expect(field(value, 'a.c.d')).toBeUndefined();
    expect(idField({ id: 12 }, 'id')).toBe('12');
    expect(idField({ id: 1.5 }, 'id')).toBeUndefined();
    expect(canonicalJson(value)).toBe('{"a":{"c":null},"b":[{"x":"é","y":1}]}');
  });
});
