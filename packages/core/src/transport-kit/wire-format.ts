import { z } from 'zod';
import {
  type CloudEventsBinding,
  decodeBinary,
  encodeBinary,
  isBinaryCloudEvent,
} from '../cloudevents/binary.js';
import type { Envelope } from '../envelope.js';
import { isOnceflowError } from '../errors.js';
import { decodeDelivery, undecodable } from './decode-delivery.js';
import { assertEncodesWithin, encodeWithinLimit } from './message-size.js';

/**
 * What an adapter writes on the broker: `onceflow` (the default: wire format v1, one JSON
 * document, see `wire.ts`) or `cloudevents-binary` (the CloudEvents protocol binding's binary
 * mode: attributes in headers, the payload as the body), which any CloudEvents consumer reads.
 * Either way the adapter's consumers read both, so a topic or queue can change format while
 * messages of the other are still on it.
 */
export type WireFormat = 'onceflow' | 'cloudevents-binary';

/** The adapters' `wireFormat` config field. */
export const wireFormatSchema = z.enum(['onceflow', 'cloudevents-binary']).default('onceflow');

/** One envelope as a broker message: body, headers to add, and the message's content type. */
export interface EncodedMessage {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
}

/**
 * Encodes an envelope in `format` for `binding`; `PayloadTooLargeError` when its wire format v1
 * encoding is over `maxMessageBytes`, whichever format is written (one meaning of the capability).
 *
 * @example
 * const { body, headers, contentType } = encodeMessage(envelope, 'cloudevents-binary', KAFKA_BINDING, 1 << 20);
 */
export function encodeMessage(
  envelope: Envelope,
  format: WireFormat,
  binding: CloudEventsBinding,
  maxMessageBytes: number,
): EncodedMessage {
  if (format === 'onceflow') {
    const body = Buffer.from(encodeWithinLimit(envelope, maxMessageBytes), 'utf8');
    return { body, headers: {}, contentType: 'application/json' };
  }
  // One meaning of `maxMessageBytes` in both formats (the receiver's claim-check compares the
  // same): the envelope's wire-v1 size. The binary form is about as large: the payload as it is
  // instead of escaped, plus the attribute headers (Kafka topics keep 64 KiB of header room).
  assertEncodesWithin(envelope, maxMessageBytes);
  const { headers, contentType } = encodeBinary(envelope, binding);
  const p = envelope.payload;
  const body = Buffer.from(p.buffer, p.byteOffset, p.byteLength);
  return { body, headers, contentType };
}

/**
 * Decodes a received message in either format, never throwing: a binary-mode CloudEvent when
 * the headers hold one for `binding`, else wire format v1 (`decodeDelivery`); what is neither
 * becomes the `onceflow.undecodable` envelope with the raw bytes, which the worker dead-letters.
 *
 * @example
 * const envelope = decodeMessage(message.value, headers, headers['content-type'], KAFKA_BINDING);
 */
export function decodeMessage(
  body: Uint8Array,
  headers: Readonly<Record<string, unknown>> | undefined,
  contentType: string | undefined,
  binding: CloudEventsBinding,
): Envelope {
  if (headers === undefined || !isBinaryCloudEvent(headers, binding)) return decodeDelivery(body);
  try {
    return decodeBinary(headers, contentType, body, binding);
  } catch (err) {
    if (!isOnceflowError(err, 'WIRE_FORMAT')) throw err;
    return undecodable(body, err.message);
  }
}
