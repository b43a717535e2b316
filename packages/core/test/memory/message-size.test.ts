import { describe, expect, it } from 'vitest';
import { createEnvelope, type Envelope } from '../../src/envelope.js';
import { PayloadTooLargeError } from '../../src/errors.js';
import { assertEncodesWithin, encodedSizeBound } from '../../src/transport-kit/message-size.js';
import { encodeEnvelope } from '../../src/wire.js';

const encodedSize = (e: Envelope) => Buffer.byteLength(encodeEnvelope(e), 'utf8');

/** Envelopes whose encoding expands the most per character or byte. */
const worstCases: Record<string, Envelope> = {
  'control characters (\\u00XX escapes)': createEnvelope({
    id: '\u0001\u0002',
    source: 's',
    type: '\u001f',
    payload: new Uint8Array(512).fill(0x01),
    headers: { '\u0007': '\u0008\u0000' },
  }),
  'bytes that are not UTF-8 (base64)': createEnvelope({
    id: 'b',
    source: 's',
    type: 't',
    payload: new Uint8Array([0xff]),
  }),
  'quotes, backslashes, emoji and a lone surrogate': createEnvelope({
    id: '"\\😀\ud800',
    source: 's',
    type: 't',
    key: '\udc00',
    payload: '"\\\n😀'.repeat(50),
    headers: { traceparent: '"\\' },
    occurredAt: '2025-01-01T00:00:00.000Z',
  }),
  'every field empty': {
    id: '',
    source: '',
    type: '',
    key: '',
    payload: new Uint8Array(0),
    headers: {},
    receivedAt: '',
    occurredAt: '',
    payloadHash: '',
  },
};

describe('encoded size limit without encoding', () => {
  it.each(Object.entries(worstCases))('bounds the encoded size from above: %s', (_, envelope) => {
    expect(encodedSizeBound(envelope)).toBeGreaterThanOrEqual(encodedSize(envelope));
  });

  it('refuses exactly the envelopes that encode larger than the limit, also near the bound', () => {
    const envelope = createEnvelope({
      id: 'big',
      source: 's',
      type: 't',
      payload: 'x'.repeat(1000),
    });
    const size = encodedSize(envelope);
    expect(encodedSizeBound(envelope)).toBeGreaterThan(size); // so the exact path is taken here
    expect(() => assertEncodesWithin(envelope, size)).not.toThrow();
    expect(() => assertEncodesWithin(envelope, size - 1)).toThrow(PayloadTooLargeError);
    expect(() => assertEncodesWithin(envelope, encodedSizeBound(envelope))).not.toThrow();
  });
});
