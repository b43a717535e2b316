import type { Envelope } from '../envelope.js';

/**
 * An envelope as a memory queue keeps it: its own copy, with the payload as a latin1 string (one
 * character per byte, so any bytes round-trip exactly). A string cannot be changed, so neither the
 * publisher nor a handler can alter a stored message. In the receiver bench this cost no more CPU
 * per request than keeping the publisher's bytes (which would not protect the message), less than
 * copying them into a Buffer, and far less than encoding wire format.
 */
export interface StoredEnvelope extends Omit<Envelope, 'payload'> {
  readonly payloadLatin1: string;
}

/**
 * @example
 * const stored = storeEnvelope(message.envelope);
 */
export function storeEnvelope(e: Envelope): StoredEnvelope {
  const { payload } = e;
  return {
    id: e.id,
    source: e.source,
    type: e.type,
    key: e.key,
    payloadLatin1: Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString(
      'latin1',
    ),
    headers: { ...e.headers },
    receivedAt: e.receivedAt,
    occurredAt: e.occurredAt,
    payloadHash: e.payloadHash,
  };
}

/**
 * A fresh envelope from a stored one, as a wire round trip would give it: every delivery and
 * dead-letter read gets its own payload bytes and headers.
 *
 * @example
 * const delivered = loadEnvelope(stored);
 */
export function loadEnvelope(s: StoredEnvelope): Envelope {
  const bytes = Buffer.from(s.payloadLatin1, 'latin1');
  return {
    id: s.id,
    source: s.source,
    type: s.type,
    key: s.key,
    payload: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    headers: { ...s.headers },
    receivedAt: s.receivedAt,
    occurredAt: s.occurredAt,
    payloadHash: s.payloadHash,
  };
}
