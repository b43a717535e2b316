import {
  binaryHeaders,
  encodeMessage,
  encodeWithinLimit,
  isBinaryCloudEvent,
  KAFKA_BINDING,
  ONCEFLOW_HEADERS,
  parseErrorInfo,
  WIRE_VERSION,
  type WireFormat,
} from '@onceflow/core/kit';
import type { Envelope, ErrorInfo } from '@onceflow/core';
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';

/** Header with the retry tier's due time; the envelope's wire body is never changed. */
const H = ONCEFLOW_HEADERS;

/** One header value as text (kafkajs hands headers over as Buffers). */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  const one = Array.isArray(v) ? v[0] : v;
  if (one === undefined) return undefined;
  return typeof one === 'string' ? one : one.toString('utf8');
}

/**
 * A record of an encoded envelope: key = `fields.key`, else the envelope's ordering key; event
 * id, dedupe key and attempt in headers, plus `extra` (due time, last error, dead-letter fields).
 * `cloudEvent`: the body is a CloudEvents binary-mode value and these are its `ce_*` and
 * `content-type` headers (no wire-version header then).
 */
export function toRecord(
  envelope: Envelope,
  body: string | Buffer,
  fields: {
    dedupeKey: string;
    attempt: number;
    key?: string | undefined;
    extra?: Readonly<Record<string, string>> | undefined;
    cloudEvent?: Readonly<Record<string, string>> | undefined;
  },
): Message {
  const headers: Record<string, string> =
    fields.cloudEvent === undefined
      ? { [H.wireVersion]: String(WIRE_VERSION) }
      : { ...fields.cloudEvent };
  headers[H.eventId] = envelope.id;
  headers[H.dedupeKey] = fields.dedupeKey;
  headers[H.attempt] = String(fields.attempt);
  return {
    key: fields.key ?? envelope.key ?? null,
    value: body,
    headers: { ...headers, ...fields.extra },
  };
}

/** A fresh record of an envelope in `format` (`PayloadTooLargeError` over `maxBytes`). */
export function encodeRecord(
  envelope: Envelope,
  format: WireFormat,
  maxBytes: number,
  fields: { dedupeKey: string; attempt: number },
): Message {
  if (format === 'onceflow')
    return toRecord(envelope, encodeWithinLimit(envelope, maxBytes), fields);
  const m = encodeMessage(envelope, format, KAFKA_BINDING, maxBytes);
  const cloudEvent: Record<string, string> = { ...m.headers };
  if (m.contentType !== undefined) cloudEvent['content-type'] = m.contentType;
  return toRecord(envelope, m.body, { ...fields, cloudEvent });
}

/** The CloudEvents headers of a binary-mode record, for a copy of it; undefined for wire v1. */
export function cloudEventHeaders(message: KafkaMessage): Record<string, string> | undefined {
  if (!isBinaryCloudEvent(message.headers, KAFKA_BINDING)) return undefined;
  const kept = binaryHeaders(message.headers, KAFKA_BINDING);
  const contentType = headerText(message.headers, 'content-type');
  if (contentType !== undefined) kept['content-type'] = contentType;
  return kept;
}

/** What the consumer reads from a record besides the envelope. */
export interface RecordMeta {
  readonly attempt: number;
  readonly dedupeKey: string | undefined;
  /** Epoch ms before which a retry-tier or dead-letter record must not be handled. */
  readonly notBefore: number;
  readonly lastError: ErrorInfo | undefined;
  /** The dead-letter headers of a record on `<topic>.dlq`, kept when it is retried there. */
  readonly deadLetter: Readonly<Record<string, string>>;
}

const DEAD_LETTER_HEADERS = [
  H.deadLetterReason,
  H.deadLetterAttempts,
  H.deadLetterError,
  H.deadLetteredAt,
] as const;

/** The record's attempt header (`RecordMeta.attempt`): all a delivery reads before it settles. */
export function readAttempt(message: KafkaMessage): number {
  const attempt = Number(headerText(message.headers, H.attempt));
  return Number.isInteger(attempt) && attempt > 0 ? attempt : 1;
}

/** The record's due time (`RecordMeta.notBefore`): all the consumer reads before handing it out. */
export function readNotBefore(message: KafkaMessage): number {
  const notBefore = Number(headerText(message.headers, H.notBefore));
  return Number.isFinite(notBefore) ? notBefore : 0;
}

/** All of `RecordMeta`; a retry reads it, the path of every record reads only what it needs. */
export function readMeta(message: KafkaMessage): RecordMeta {
  const deadLetter: Record<string, string> = {};
  for (const name of DEAD_LETTER_HEADERS) {
    const v = headerText(message.headers, name);
    if (v !== undefined) deadLetter[name] = v;
  }
  return {
    attempt: readAttempt(message),
    dedupeKey: headerText(message.headers, H.dedupeKey),
    notBefore: readNotBefore(message),
    lastError: parseErrorInfo(headerText(message.headers, H.lastError)),
    deadLetter,
  };
}
