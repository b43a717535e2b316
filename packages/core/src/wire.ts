import { z } from 'zod';
import type { Envelope } from './envelope.js';
import { WireFormatError } from './errors.js';
import { jsonSyntaxProblem } from './json-syntax.js';

/**
 * The wire format every adapter uses, version 1: one UTF-8 JSON document, so it is valid as an
 * SQS body, a BullMQ job's data, an AMQP body or a Kafka value alike.
 *
 * ```json
 * {"v":1,"id":"evt_1","source":"stripe","type":"charge.succeeded",
 *  "headers":{"content-type":"application/json"},"receivedAt":"…","payloadHash":"…",
 *  "enc":"utf8","payload":"{\"id\":\"evt_1\",…}","key":"cus_9","occurredAt":"…"}
 * ```
 *
 * Fields are written in this order, optional ones (`key`, `occurredAt`) last and only when set;
 * the golden fixtures in `test/wire/fixtures` hold the exact bytes.
 *
 * `enc` is `utf8` when the payload bytes are valid UTF-8 (the payload is then readable as is) and
 * `base64` otherwise, so arbitrary bytes round-trip exactly. Decoders reject any other `v`.
 */
export const WIRE_VERSION = 1 as const;

const wireSchema = z.object({
  v: z.literal(WIRE_VERSION),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.string(),
  key: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  receivedAt: z.string(),
  occurredAt: z.string().optional(),
  payloadHash: z.string(),
  enc: z.enum(['utf8', 'base64']),
  payload: z.string(),
});

export type WireEnvelope = z.infer<typeof wireSchema>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function encodePayload(bytes: Uint8Array): { enc: 'utf8' | 'base64'; payload: string } {
  try {
    return { enc: 'utf8', payload: utf8.decode(bytes) };
  } catch {
    return { enc: 'base64', payload: Buffer.from(bytes).toString('base64') };
  }
}

/** The envelope as a plain JSON-safe object (for stores that keep JSON, e.g. BullMQ job data). */
export function toWire(e: Envelope): WireEnvelope {
  const w: WireEnvelope = {
    v: WIRE_VERSION,
    id: e.id,
    source: e.source,
    type: e.type,
    headers: { ...e.headers },
    receivedAt: e.receivedAt,
    payloadHash: e.payloadHash,
    ...encodePayload(e.payload),
  };
  if (e.key !== undefined) w.key = e.key;
  if (e.occurredAt !== undefined) w.occurredAt = e.occurredAt;
  return w;
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isOptionalText = (v: unknown): v is string | undefined => v === undefined || isText(v);

function isTextRecord(v: unknown): v is Record<string, string> {
  if (typeof v !== 'object' || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const value of Object.values(v)) if (!isText(value)) return false;
  return true;
}

/**
 * `wireSchema`'s check written out, for the hot path: every delivery is decoded once. A value it
 * refuses goes through the schema, which names what is wrong.
 */
function isWire(input: unknown): input is WireEnvelope {
  if (typeof input !== 'object' || input === null) return false;
  const w = input as Record<string, unknown>;
  return (
    w.v === WIRE_VERSION &&
    isText(w.id) &&
    w.id.length > 0 &&
    isText(w.source) &&
    w.source.length > 0 &&
    isText(w.type) &&
    isOptionalText(w.key) &&
    isTextRecord(w.headers) &&
    isText(w.receivedAt) &&
    isOptionalText(w.occurredAt) &&
    isText(w.payloadHash) &&
    (w.enc === 'utf8' || w.enc === 'base64') &&
    isText(w.payload)
  );
}

function parseWire(input: unknown): WireEnvelope {
  const parsed = wireSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new WireFormatError(`not an onceflow v${WIRE_VERSION} envelope: ${parsed.error.message}`);
}

/** Reads a wire object back. Throws `WireFormatError` on anything that is not wire format v1. */
export function fromWire(input: unknown): Envelope {
  const w = isWire(input) ? input : parseWire(input);
  const payload =
    w.enc === 'utf8' ? Buffer.from(w.payload, 'utf8') : Buffer.from(w.payload, 'base64');
  return {
    id: w.id,
    source: w.source,
    type: w.type,
    key: w.key,
    payload: new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength),
    headers: { ...w.headers },
    receivedAt: w.receivedAt,
    occurredAt: w.occurredAt,
    payloadHash: w.payloadHash,
  };
}

/**
 * Serialises an envelope to wire format v1 (a UTF-8 JSON string).
 *
 * @example
 * const body = encodeEnvelope(env); // send as the broker message body
 */
export function encodeEnvelope(e: Envelope): string {
  return JSON.stringify(toWire(e));
}

/**
 * Parses wire format v1 from a string or bytes. Throws `WireFormatError` on malformed input.
 *
 * @example
 * const env = decodeEnvelope(message.Body);
 */
export function decodeEnvelope(data: string | Uint8Array): Envelope {
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new WireFormatError(`envelope is not JSON: ${jsonSyntaxProblem(err)}`);
  }
  return fromWire(json);
}
