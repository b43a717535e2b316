import { randomUUID } from 'node:crypto';
import { type Envelope, type EnvelopeInit, createEnvelope } from '@onceflow/core';

/**
 * A test envelope with a unique id (`evt_<uuid>`), source `conformance`, type `test.event` and a
 * small JSON payload, unless `init` says otherwise.
 *
 * @example
 * const env = testEnvelope({ key: 'cus_1', payload: new Uint8Array([0xff, 0x00]) });
 */
export function testEnvelope(init: Partial<EnvelopeInit> = {}): Envelope {
  const id = init.id ?? `evt_${randomUUID()}`;
  return createEnvelope({
    source: 'conformance',
    type: 'test.event',
    payload: { id },
    ...init,
    id,
  });
}

/** Bytes that are not valid UTF-8 (they must travel base64 on the wire and come back exact). */
export const NON_UTF8_BYTES = new Uint8Array([
  0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0xf0, 0x9f,
]);

/** `n` ASCII letters and digits (no JSON escaping), deterministic for a seed. */
export function asciiBytes(n: number, seed = 1): Uint8Array {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = alphabet.charCodeAt((x >>> 0) % alphabet.length);
  }
  return out;
}

/** Byte-for-byte equality. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
