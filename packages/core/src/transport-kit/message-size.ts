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
