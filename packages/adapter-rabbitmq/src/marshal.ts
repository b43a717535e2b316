import type { DeadLetter, Envelope, ErrorInfo } from '@onceflow/core';
import {
  type DeadLetterFields,
  deadLetterHeaders,
  decodeEnvelope,
  dedupeKeyOf,
  encodeEnvelope,
  encodeWithinLimit,
  ONCEFLOW_HEADERS as H,
  parseErrorInfo,
  readDeadLetterHeaders,
  WIRE_VERSION,
} from '@onceflow/core/kit';
import type { Message, MessageProperties } from 'amqplib';
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
 * A message for the work queue (or a retry queue): body in wire format v1, `messageId` = event id,
 * persistent, and onceflow's headers. Throws `PayloadTooLargeError` over `maxBytes`.
 */
export function toWorkMessage(queue: string, m: WorkMessage, maxBytes: number): OutgoingAmqp {
  // Lean on purpose (headers cost broker and client time per message): the event id travels as
  // `messageId`, and a missing attempt header means attempt 1.
  const headers: Record<string, string> = {
    [H.wireVersion]: String(WIRE_VERSION),
    [H.dedupeKey]: m.dedupeKey,
  };
  if (m.attempt !== 1) headers[H.attempt] = String(m.attempt);
  if (m.lastError) headers[H.lastError] = JSON.stringify(m.lastError);
  const body = Buffer.from(encodeWithinLimit(m.envelope, maxBytes), 'utf8');
  return { queue, body, options: { ...baseProperties(m.envelope), headers } };
}

/** A message for the dead-letter queue, with reason, attempts and last error in headers. */
export function toDeadLetterMessage(
  queue: string,
  m: Omit<WorkMessage, 'attempt'>,
  fields: DeadLetterFields,
): OutgoingAmqp {
  const headers: Record<string, string> = {
    [H.wireVersion]: String(WIRE_VERSION),
    [H.eventId]: m.envelope.id,
    [H.dedupeKey]: m.dedupeKey,
    ...deadLetterHeaders(fields),
  };
  const body = Buffer.from(encodeEnvelope(m.envelope), 'utf8');
  return { queue, body, options: { ...baseProperties(m.envelope), headers } };
}

/**
 * How often the broker handed this message out before: `x-delivery-count` on quorum queues, else
 * 1 when it is flagged redelivered (classic queues only say "at least once before").
 */
function returns(msg: Message): number {
  const count = Number(msg.properties.headers?.['x-delivery-count'] ?? 0);
  return Math.max(Number.isSafeInteger(count) ? count : 0, msg.fields.redelivered ? 1 : 0);
}

/** Reads a work-queue delivery. Throws `WireFormatError` when the body is not a v1 envelope. */
export function fromWorkMessage(msg: Message): WorkMessage {
  const headers = msg.properties.headers ?? {};
  const envelope = decodeEnvelope(msg.content.toString('utf8'));
  const base = Number(text(headers[H.attempt]));
  return {
    envelope,
    dedupeKey: dedupeKeyOf({ envelope, dedupeKey: text(headers[H.dedupeKey]) }),
    attempt: (Number.isSafeInteger(base) && base >= 1 ? base : 1) + returns(msg),
    lastError: parseErrorInfo(text(headers[H.lastError])),
  };
}

/**
 * Reads a dead-letter-queue message. Its id is its dedupe key (`<source>:<id>` unless published
 * with another), so copies of one message dead-lettered twice (a redelivery after a lost
 * connection, a relay re-publish) share it. One the broker moved there itself (RabbitMQ 4's
 * delivery limit) has no onceflow reason: it reads `broker: <x-first-death-reason>`.
 */
export function fromDeadLetterMessage(msg: Message): DeadLetter & { readonly dedupeKey: string } {
  const headers = msg.properties.headers ?? {};
  const props: MessageProperties = msg.properties;
  const envelope = decodeEnvelope(msg.content.toString('utf8'));
  const fallbackAt = new Date(
    typeof props.timestamp === 'number' ? props.timestamp * 1000 : Date.now(),
  ).toISOString();
  const fields = readDeadLetterHeaders(headers, fallbackAt);
  const brokerReason = text(headers['x-first-death-reason']);
  const ours = headers[H.deadLetterReason] !== undefined;
  const dedupeKey = dedupeKeyOf({ envelope, dedupeKey: text(headers[H.dedupeKey]) });
  return {
    id: dedupeKey,
    envelope,
    dedupeKey,
    ...fields,
    reason: ours || brokerReason === undefined ? fields.reason : `broker: ${brokerReason}`,
    attempts: ours ? fields.attempts : fields.attempts || returns(msg),
  };
}
