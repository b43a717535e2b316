import { createHash } from 'node:crypto';
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { dedupeKeyOf, encodeWithinLimit, ONCEFLOW_HEADERS, WIRE_VERSION } from '@onceflow/core/kit';
import { type Envelope, type OutgoingMessage, PayloadTooLargeError } from '@onceflow/core';

/** What one `SendMessageBatch` entry carries, before its batch id is assigned. */
export interface SqsOutgoing {
  readonly body: string;
  readonly attributes: Record<string, MessageAttributeValue>;
  /** sha-256 hex of the dedupe key (FIFO `MessageDeduplicationId`). */
  readonly dedupeId: string;
  /** FIFO `MessageGroupId`: the envelope key, hashed when SQS would not accept it as is. */
  readonly groupId: string;
  /** Body plus attribute bytes, as SQS counts them against its size limit. */
  readonly bytes: number;
}

/** sha-256 hex: 64 characters SQS accepts as a deduplication or group id. */
export const sqsId = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Printable ASCII without space, 1–128 long: what SQS accepts as an id. */
const SQS_ID = /^[\x21-\x7e]{1,128}$/;
/** Characters SQS refuses in bodies and attribute values (outside the XML character ranges). */
const NOT_XML = /[^\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;
/** Attribute budget in bytes: the whole set stays well inside `ATTRIBUTE_RESERVE_BYTES`. */
const MAX_ID_BYTES = 512;

/**
 * A string attribute of at most `maxBytes` UTF-8 bytes, with what SQS refuses replaced by U+FFFD;
 * undefined when empty (SQS refuses empty values).
 */
export function textAttribute(value: string, maxBytes: number) {
  let text = value.replace(NOT_XML, '\ufffd');
  if (Buffer.byteLength(text, 'utf8') > maxBytes)
    text = Buffer.from(text, 'utf8')
      .subarray(0, maxBytes)
      .toString('utf8')
      .replace(/\ufffd$/, '');
  return text === '' ? undefined : { DataType: 'String', StringValue: text };
}

/** Size of attributes the way SQS counts them: name, type and value bytes. */
export function attributeBytes(attributes: Record<string, MessageAttributeValue>): number {
  let n = 0;
  for (const [name, a] of Object.entries(attributes))
    n += name.length + (a.DataType?.length ?? 0) + Buffer.byteLength(a.StringValue ?? '', 'utf8');
  return n;
}

/** Attributes of a work-queue message: wire version, event id, readable dedupe key. */
export function messageAttributes(envelope: Envelope, dedupeKey: string) {
  const attributes: Record<string, MessageAttributeValue> = {};
  const put = (name: string, value: string) => {
    const a = textAttribute(value, MAX_ID_BYTES);
    if (a) attributes[name] = a;
  };
  put(ONCEFLOW_HEADERS.wireVersion, String(WIRE_VERSION));
  put(ONCEFLOW_HEADERS.eventId, envelope.id);
  put(ONCEFLOW_HEADERS.dedupeKey, dedupeKey);
  return attributes;
}

/** The FIFO group of an envelope: its key (hashed if SQS would refuse it), else its own dedupe id. */
export function groupIdOf(envelope: Envelope, dedupeId: string): string {
  if (envelope.key === undefined) return dedupeId;
  return SQS_ID.test(envelope.key) ? envelope.key : sqsId(envelope.key);
}

/**
 * The body of an envelope: wire format v1, with U+FFFE and U+FFFF (valid JSON, refused by SQS)
 * written as JSON escapes. Throws `PayloadTooLargeError` over `maxMessageBytes`.
 */
export function encodeBody(envelope: Envelope, maxMessageBytes: number): string {
  const body = encodeWithinLimit(envelope, maxMessageBytes).replace(
    /[\ufffe\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
  if (Buffer.byteLength(body, 'utf8') > maxMessageBytes) {
    const err = new PayloadTooLargeError(maxMessageBytes);
    err.message = `envelope ${envelope.source}/${envelope.id} encodes to more than ${maxMessageBytes} bytes`;
    throw err;
  }
  return body;
}

/**
 * Maps one message to publish onto SQS: `MessageDeduplicationId` = sha-256 of the dedupe key
 * (always hashed, so every key fits SQS's 128-character alphabet; the readable key travels as the
 * `x-onceflow-dedupe-key` attribute), `MessageGroupId` = the ordering key.
 *
 * @example
 * const out = toOutgoing({ envelope }, 1_040_384);
 */
export function toOutgoing(message: OutgoingMessage, maxMessageBytes: number): SqsOutgoing {
  const key = dedupeKeyOf(message);
  const body = encodeBody(message.envelope, maxMessageBytes);
  const dedupeId = sqsId(key);
  const attributes = messageAttributes(message.envelope, key);
  return {
    body,
    attributes,
    dedupeId,
    groupId: groupIdOf(message.envelope, dedupeId),
    bytes: Buffer.byteLength(body, 'utf8') + attributeBytes(attributes),
  };
}

const receiveCount = (message: Message) => {
  const n = Number(message.Attributes?.ApproximateReceiveCount);
  return Number.isInteger(n) && n >= 1 ? n : 1;
};

/** The attempt of a work-queue message: its `ApproximateReceiveCount` (1 on the first receive). */
export const attemptOf = (message: Message): number => receiveCount(message);

/**
 * The attempt of a dead-letter-queue message: the deliveries it had before this one, in either
 * queue. SQS keeps counting a moved message's receives (ElasticMQ 1.7 does; AWS does not document
 * it either way), so the first receive from the dead-letter queue reads `deliveryLimit + 1` and
 * this is `deliveryLimit`; at least 1.
 */
export const deadLetterAttemptOf = (message: Message): number =>
  Math.max(1, receiveCount(message) - 1);
