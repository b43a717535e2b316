import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type HmacAlgorithm = 'sha256' | 'sha384' | 'sha512';
export type DigestEncoding = 'hex' | 'base64' | 'base64url';

/**
 * HMAC over the parts, fed in order: strings as UTF-8, bytes exactly as they are (the raw body is
 * never decoded and re-encoded, so any byte sequence verifies as sent).
 */
export function hmacDigest(
  key: string | Uint8Array,
  parts: readonly (string | Uint8Array)[],
  // sha1 only for the senders whose scheme is fixed to it (Twilio, Intercom): not configurable.
  algorithm: HmacAlgorithm | 'sha1' = 'sha256',
): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

const WELL_FORMED: Record<DigestEncoding, RegExp> = {
  hex: /^(?:[0-9a-fA-F]{2})+$/,
  base64: /^[A-Za-z0-9+/]+={0,2}$/,
  base64url: /^[A-Za-z0-9_-]+={0,2}$/,
};

/** Decodes a received digest; undefined when it is not well-formed in that encoding. */
export function decodeDigest(value: string, encoding: DigestEncoding): Buffer | undefined {
  if (!WELL_FORMED[encoding].test(value)) return undefined;
  return Buffer.from(value, encoding);
}

/**
 * Constant-time: true when any received digest equals any expected one (one expected digest per
 * configured secret). Every pair is compared, with no early exit, so the time tells neither which
 * secret matched nor how many bytes did. A digest's length is public (the algorithm's output
 * size), so a received value of another length is counted as a mismatch without comparing bytes.
 */
export function anyDigestMatches(
  expected: readonly Buffer[],
  received: readonly (Buffer | undefined)[],
): boolean {
  let matched = false;
  for (const want of expected) {
    for (const got of received) {
      const equal = got !== undefined && got.length === want.length && timingSafeEqual(want, got);
      matched = equal || matched;
    }
  }
  return matched;
}

const sha256 = (value: string | Uint8Array): Buffer => createHash('sha256').update(value).digest();

/**
 * Constant-time equality of two secrets of any length (Graph's clientState). Both are hashed
 * first, so `timingSafeEqual` always sees two 32-byte buffers: the time depends neither on where
 * the values differ nor on whether their lengths agree.
 */
export function secretEquals(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** sha-256, lower-case hex. */
export function sha256Hex(value: string | Uint8Array): string {
  return sha256(value).toString('hex');
}
