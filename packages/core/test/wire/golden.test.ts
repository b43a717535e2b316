import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/envelope.js';
import { WireFormatError } from '../../src/errors.js';
import { decodeEnvelope, encodeEnvelope, toWire } from '../../src/wire.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

/**
 * The envelopes behind the golden files in `fixtures/`: `<name>.wire` holds the exact bytes of
 * `encodeEnvelope(GOLDEN[name])`. The files are the contract (wire format v1, the same bytes on
 * every broker): a change to one is a wire-format change, and needs a new `v`.
 */
export const GOLDEN = {
  /** Every field set; the payload is UTF-8 JSON with non-ASCII text and quotes. */
  'utf8-json': {
    id: 'evt_1',
    source: 'stripe',
    type: 'charge.succeeded',
    key: 'cus_9',
    payload: utf8('{"id":"evt_1","amount":4200,"note":"ünïcødé ✓ \\"quoted\\""}'),
    headers: {
      'content-type': 'application/json',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    },
    receivedAt: '2024-05-01T12:00:01.250Z',
    occurredAt: '2024-05-01T12:00:00.000Z',
    payloadHash: '5cc5f2992e69a27669d3f52575a97abe2a2b65687095527b34dc55b4f48dcdae',
  },
  /** No key, no occurredAt, no headers. */
  minimal: {
    id: 'ord_1:created',
    source: 'orders',
    type: 'order.created',
    payload: utf8('ping'),
    headers: {},
    receivedAt: '2024-05-01T12:00:01.250Z',
    payloadHash: '758d61f26a44448384e5c4468a0dcb7a2abe456067b0f7b505bc28b9411fe931',
  },
  /** Payload bytes that are not UTF-8: carried as base64. */
  binary: {
    id: 'blob_1',
    source: 'uploads',
    type: 'blob.stored',
    key: 'bucket-a',
    payload: new Uint8Array([0x00, 0xff, 0xfe, 0x80, 0x41, 0x0a]),
    headers: { 'content-type': 'application/octet-stream' },
    receivedAt: '2024-05-01T12:00:01.250Z',
    payloadHash: 'a174e7175074a317b2325e36e5e3ce76bc2c995b0b056249dfc13752860b472b',
  },
} satisfies Record<string, Envelope>;

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`fixtures/${name}.wire`, import.meta.url));

/** An envelope with its payload as a plain array, for deep equality. */
const plain = (e: Envelope) => ({ ...e, payload: [...e.payload] });

describe('wire format v1: bytes in, bytes out', () => {
  for (const [name, envelope] of Object.entries(GOLDEN)) {
    it(`encodes the ${name} envelope to fixtures/${name}.wire byte for byte`, () => {
      expect(Buffer.from(encodeEnvelope(envelope), 'utf8').equals(fixture(name))).toBe(true);
      expect(encodeEnvelope(envelope)).toBe(fixture(name).toString('utf8'));
    });

    it(`decodes fixtures/${name}.wire, as bytes or text, back to the ${name} envelope`, () => {
      const bytes = new Uint8Array(fixture(name));
      expect(plain(decodeEnvelope(bytes))).toEqual(plain(envelope));
      expect(plain(decodeEnvelope(fixture(name).toString('utf8')))).toEqual(plain(envelope));
      expect(encodeEnvelope(decodeEnvelope(bytes))).toBe(fixture(name).toString('utf8'));
    });
  }

  it('carries UTF-8 payloads as text and other bytes as base64', () => {
    expect(toWire(GOLDEN['utf8-json'])).toMatchObject({ enc: 'utf8' });
    expect(toWire(GOLDEN.binary)).toMatchObject({ enc: 'base64', payload: 'AP/+gEEK' });
  });
});

describe('wire format v1: what decoders refuse with WireFormatError', () => {
  const minimal = JSON.parse(fixture('minimal').toString('utf8')) as Record<string, unknown>;
  const without = (field: string) => {
    const { [field]: _, ...rest } = minimal;
    return rest;
  };
  const refused: [string, unknown][] = [
    ['v 2', { ...minimal, v: 2 }],
    ['v 0', { ...minimal, v: 0 }],
    ['v "1" (a string)', { ...minimal, v: '1' }],
    ['enc "hex"', { ...minimal, enc: 'hex' }],
    ['enc "UTF8" (case matters)', { ...minimal, enc: 'UTF8' }],
    ['an empty id', { ...minimal, id: '' }],
    ['a header value that is not a string', { ...minimal, headers: { 'x-n': 1 } }],
    ...['v', 'id', 'source', 'type', 'headers', 'receivedAt', 'payloadHash', 'enc', 'payload'].map(
      (field): [string, unknown] => [`no ${field}`, without(field)],
    ),
  ];
  const expectRefused = (input: string | Uint8Array) => {
    let thrown: unknown;
    try {
      decodeEnvelope(input);
    } catch (err) {
      thrown = err;
    }
    expect(thrown, String(input)).toBeInstanceOf(WireFormatError);
    expect(thrown).toMatchObject({ code: 'WIRE_FORMAT' });
  };
  for (const [what, wire] of refused) {
    it(`refuses ${what}`, () => expectRefused(JSON.stringify(wire)));
  }

  it('refuses bytes that are not JSON, and JSON that is not an object', () => {
    for (const input of ['{"v":1,', 'null', '[]', '"text"', new Uint8Array([0xff, 0xfe])])
      expectRefused(input);
  });
});
