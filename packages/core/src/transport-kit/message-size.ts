import type { Envelope } from '../envelope.js';
import { PayloadTooLargeError } from '../errors.js';
import { encodeEnvelope } from '../wire.js';

/**
 * Encodes an envelope to wire format v1 and refuses it before it reaches the broker when the
 * encoded body is larger than `maxMessageBytes` (the transport's declared capability).
 * Throws `PayloadTooLargeError` (code `PAYLOAD_TOO_LARGE`, `limitBytes` set).
 *
 * @example
 * const body = encodeWithinLimit(message.envelope, capabilities.maxMessageBytes);
 */
export function encodeWithinLimit(envelope: Envelope, maxMessageBytes: number): string {
  const body = encodeEnvelope(envelope);
  const size = Buffer.byteLength(body, 'utf8');
  if (size > maxMessageBytes) {
    const err = new PayloadTooLargeError(maxMessageBytes);
    err.message = `envelope ${envelope.source}/${envelope.id} encodes to ${size} bytes, over this transport's limit of ${maxMessageBytes}`;
    throw err;
  }
  return body;
}

/**
 * The same refusal as `encodeWithinLimit`, for transports that keep the envelope rather than its
 * encoding (memory): throws `PayloadTooLargeError` exactly when the wire format v1 encoding would
 * be larger than `maxMessageBytes`. It encodes only when `encodedSizeBound` does not already fit.
 *
 * @example
 * assertEncodesWithin(message.envelope, capabilities.maxMessageBytes);
 */
export function assertEncodesWithin(envelope: Envelope, maxMessageBytes: number): void {
  // `!(… <= …)`, not `… > …`: a NaN bound (a malformed envelope) takes the exact path.
  if (!(encodedSizeBound(envelope) <= maxMessageBytes)) {
    encodeWithinLimit(envelope, maxMessageBytes);
  }
}

/** Wire format v1's field names and punctuation with every value empty: 136 bytes, rounded up. */
const FIXED_BYTES = 160;
/** `"name":"value",` around each header. */
const HEADER_PUNCTUATION = 6;
/**
 * Most bytes one UTF-16 unit of a string, or one payload byte, takes on the wire: a `\u00XX`
 * escape. (Base64 takes 4 bytes per 3; UTF-8 text outside ASCII takes at most 3 bytes per unit.)
 */
const MAX_BYTES_PER_UNIT = 6;

/**
 * An upper bound on `Buffer.byteLength(encodeEnvelope(envelope))`, computed from lengths alone.
 *
 * @example
 * encodedSizeBound(envelope) <= 256 * 1024; // true: it encodes to at most 256 KiB
 */
export function encodedSizeBound(envelope: Envelope): number {
  const e = envelope;
  let units =
    e.id.length +
    e.source.length +
    e.type.length +
    e.receivedAt.length +
    e.payloadHash.length +
    (e.key?.length ?? 0) +
    (e.occurredAt?.length ?? 0);
  let headers = 0;
  for (const name in e.headers) {
    units += name.length + (e.headers[name]?.length ?? 0);
    headers++;
  }
  return (
    FIXED_BYTES + headers * HEADER_PUNCTUATION + MAX_BYTES_PER_UNIT * (units + e.payload.byteLength)
  );
}
