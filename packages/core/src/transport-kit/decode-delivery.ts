import { createEnvelope, type Envelope, hashPayload } from '../envelope.js';
import { isOnceflowError } from '../errors.js';
import { decodeEnvelope } from '../wire.js';

/** The source and type of an envelope made for a message that is not wire format v1. */
export const UNDECODABLE = { source: 'onceflow', type: 'onceflow.undecodable' } as const;

/** Header of an undecodable message's envelope: why it could not be decoded. */
export const DECODE_ERROR_HEADER = 'x-onceflow-decode-error';

/**
 * Decodes a received message body, never throwing: a body that is not a wire-format-v1 envelope
 * becomes an envelope of source `onceflow`, type `onceflow.undecodable`, id the sha-256 of the
 * bytes and the raw bytes as payload, so it reaches the worker like any message and is recorded
 * as a dead letter with its bytes and the reason, on every broker alike.
 *
 * @example
 * const envelope = decodeDelivery(message.Body ?? '');
 */
export function decodeDelivery(body: Uint8Array | string): Envelope {
  try {
    return decodeEnvelope(body);
  } catch (err) {
    if (!isOnceflowError(err, 'WIRE_FORMAT')) throw err;
    return undecodable(
      typeof body === 'string' ? new TextEncoder().encode(body) : body,
      err.message,
    );
  }
}

/** The `onceflow.undecodable` envelope of bytes that could not be decoded, and why. */
export function undecodable(bytes: Uint8Array, reason: string): Envelope {
  return createEnvelope({
    ...UNDECODABLE,
    id: hashPayload(bytes),
    payload: bytes,
    headers: { [DECODE_ERROR_HEADER]: reason },
  });
}
