import type { Envelope, ErrorInfo } from '@onceflow/core';
import {
  AMQP_BINDING,
  type BrokerDeadLetterFields,
  deadLetterHeaders,
  decodeMessage,
  dedupeKeyOf,
  encodeMessage,
  ONCEFLOW_HEADERS as H,
  parseErrorInfo,
  readDeadLetterHeaders,
  WIRE_VERSION,
  type WireFormat,
} from '@onceflow/core/kit';
import type { Message } from 'amqplib';
import type { OutgoingAmqp } from './publisher.js';

export interface WorkMessage {
  readonly envelope: Envelope;
  readonly dedupeKey: string;
  /** The attempt its next delivery has (1 for a fresh publish or a redrive). */
  readonly attempt: number;
  readonly lastError?: ErrorInfo | undefined;
}

const text = (v: unknown): string | undefined => {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return typeof v === 'number' ? String(v) : undefined;
};

const baseProperties = (envelope: Envelope) => ({
  messageId: envelope.id,
  persistent: true,
  contentType: 'application/json',
  type: envelope.type,
  appId: 'onceflow',
});

/**
 * Body, properties and headers of an envelope in `format`: wire format v1 (with its version
 * header), or CloudEvents binary mode (`cloudEvents_*` headers, `content_type` = datacontenttype,
 * the payload as the body). `PayloadTooLargeError` over `maxBytes`.
 */
function encoded(envelope: Envelope, format: WireFormat, maxBytes: number) {
  const m = encodeMessage(envelope, format, AMQP_BINDING, maxBytes);
  const headers: Record<string, string> =
    format === 'onceflow' ? { [H.wireVersion]: String(WIRE_VERSION) } : { ...m.headers };
  const properties: Omit<OutgoingAmqp['options'], 'headers'> = { ...baseProperties(envelope) };
  if (format !== 'onceflow') properties.contentType = m.contentType;
  return { body: m.body, headers, properties };
}

/**
 * A message for the work queue (or a retry queue): body in `format` (wire format v1 by default),
 * `messageId` = event id, persistent, and onceflow's headers. Throws `PayloadTooLargeError` over
 * `maxBytes`.
 */
export function toWorkMessage(
  queue: string,
  m: WorkMessage,
  maxBytes: number,
  format: WireFormat = 'onceflow',
): OutgoingAmqp {
  // Lean on purpose (headers cost broker and client time per message): the event id travels as
  // `messageId`, and a missing attempt header means attempt 1.
  const { body, headers, properties } = encoded(m.envelope, format, maxBytes);
  headers[H.dedupeKey] = m.dedupeKey;
  if (m.attempt !== 1) headers[H.attempt] = String(m.attempt);
  if (m.lastError) headers[H.lastError] = JSON.stringify(m.lastError);
  return { queue, body, options: { ...properties, headers } };
}

/**
 * A message for the dead-letter queue (or one of its delay buckets), with reason, attempts, last
 * error and time in onceflow's dead-letter headers (`deadLetterHeaders`).
 */
export function toDeadLetterMessage(
  queue: string,
  m: Pick<WorkMessage, 'envelope' | 'dedupeKey'>,
  fields: BrokerDeadLetterFields,
  format: WireFormat = 'onceflow',
): OutgoingAmqp {
  const { body, headers, properties } = encoded(m.envelope, format, Number.POSITIVE_INFINITY);
  headers[H.eventId] = m.envelope.id;
  headers[H.dedupeKey] = m.dedupeKey;
  Object.assign(headers, deadLetterHeaders(fields));
  return { queue, body, options: { ...properties, headers } };
}

/** The envelope of a received message, in whichever format it was written (never throws). */
const envelopeOf = (msg: Message): Envelope =>
  decodeMessage(
    msg.content,
    msg.properties.headers,
    msg.properties.contentType as string | undefined,
    AMQP_BINDING,
  );

const count = (v: unknown): number => {
  const n = Number(text(v) ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
};

/** The attempt header: the attempt this copy's first delivery has (absent: 1). */
const baseAttempt = (headers: Record<string, unknown>): number => {
  const base = Number(text(headers[H.attempt]));
  return Number.isSafeInteger(base) && base >= 1 ? base : 1;
};

/**
 * How often the broker handed this copy out before, as counted by the queue: quorum queues say
 * `x-delivery-count` (every return on 3.x; failed deliveries only on 4.x, which counts every
 * acquisition in `x-acquired-count`); classic queues only flag a redelivery ("at least once").
 */
function returns(msg: Message): number {
  const headers = msg.properties.headers ?? {};
  const counted = Math.max(count(headers['x-delivery-count']), count(headers['x-acquired-count']));
  return Math.max(counted, msg.fields.redelivered ? 1 : 0);
}

/**
 * Reads a work-queue delivery; never throws. `attempt` is the attempt header (set by a retry) plus
 * the broker's returns. A body that is neither a v1 envelope nor a CloudEvents binary-mode message becomes the kit's `onceflow.undecodable`
 * envelope carrying the raw bytes (`decodeDelivery`), which the worker dead-letters.
 */
export function fromWorkMessage(msg: Message): WorkMessage {
  const headers = msg.properties.headers ?? {};
  const envelope = envelopeOf(msg);
  return {
    envelope,
    dedupeKey: dedupeKeyOf({ envelope, dedupeKey: text(headers[H.dedupeKey]) }),
    attempt: baseAttempt(headers) + returns(msg),
    lastError: parseErrorInfo(text(headers[H.lastError])),
  };
}

/** A dead-letter-queue message as the dead-letter consumer reads it. */
export interface DeadLetterMessage {
  readonly envelope: Envelope;
  readonly dedupeKey: string;
  /** `attempts`: the deliveries it had on the work queue before it was moved. */
  readonly fields: BrokerDeadLetterFields;
}

/**
 * Reads a dead-letter-queue message; never throws (see `fromWorkMessage`). One the adapter moved
 * carries onceflow's dead-letter headers. One the broker moved itself (the quorum queue's
 * `x-delivery-limit`, should the adapter have failed to) has none: it reads
 * `broker: <x-first-death-reason>`, with at least `deliveryLimit` attempts.
 */
export function fromDeadLetterMessage(msg: Message, deliveryLimit: number): DeadLetterMessage {
  const headers = msg.properties.headers ?? {};
  const envelope = envelopeOf(msg);
  const dedupeKey = dedupeKeyOf({ envelope, dedupeKey: text(headers[H.dedupeKey]) });
  const { timestamp } = msg.properties as { timestamp?: unknown };
  const fallbackAt = new Date(
    typeof timestamp === 'number' ? timestamp * 1000 : Date.now(),
  ).toISOString();
  const fields = readDeadLetterHeaders(headers, fallbackAt);
  if (headers[H.deadLetterReason] !== undefined) return { envelope, dedupeKey, fields };
  const counted = Math.max(count(headers['x-delivery-count']), count(headers['x-acquired-count']));
  return {
    envelope,
    dedupeKey,
    fields: {
      ...fields,
      reason: `broker: ${text(headers['x-first-death-reason']) ?? 'unknown'}`,
      attempts: Math.max(deliveryLimit, baseAttempt(headers) - 1 + counted),
      lastError: parseErrorInfo(text(headers[H.lastError])),
    },
  };
}
