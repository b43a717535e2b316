import { ONCEFLOW_HEADERS, WIRE_VERSION, decodeEnvelope, parseErrorInfo } from '@onceflow/core/kit';
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

/** Headers as a plain string map, for `readDeadLetterHeaders`. */
export function headerMap(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers ?? {})) {
    const v = headerText(headers, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * A record of a wire-encoded envelope: key = the envelope's ordering key, event id, dedupe key and
 * attempt in headers, plus `extra` (retry due time, last error, dead-letter fields).
 */
export function toRecord(
  envelope: Envelope,
  body: string,
  fields: { dedupeKey: string; attempt: number; extra?: Record<string, string> },
): Message {
  return {
    key: envelope.key ?? null,
    value: body,
    headers: {
      [H.wireVersion]: String(WIRE_VERSION),
      [H.eventId]: envelope.id,
      [H.dedupeKey]: fields.dedupeKey,
      [H.attempt]: String(fields.attempt),
      ...fields.extra,
    },
  };
}

/** What the consumer reads from a record besides the envelope. */
export interface RecordMeta {
  readonly attempt: number;
  readonly dedupeKey: string | undefined;
  /** Epoch ms before which a retry-tier record must not be handled. */
  readonly notBefore: number;
  readonly lastError: ErrorInfo | undefined;
}

export function readMeta(message: KafkaMessage): RecordMeta {
  const attempt = Number(headerText(message.headers, H.attempt));
  const notBefore = Number(headerText(message.headers, H.notBefore));
  return {
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1,
    dedupeKey: headerText(message.headers, H.dedupeKey),
    notBefore: Number.isFinite(notBefore) ? notBefore : 0,
    lastError: parseErrorInfo(headerText(message.headers, H.lastError)),
  };
}

/** Decodes a record's value (wire format v1); throws `WireFormatError` otherwise. */
export const readEnvelope = (message: KafkaMessage): Envelope =>
  decodeEnvelope(message.value ?? new Uint8Array(0));
