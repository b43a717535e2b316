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
 * Header that marks an envelope in memory as a claim-check reference: the event's reference
 * without its payload (`claimCheckReference`). Never set it yourself.
 */
export const CLAIM_CHECK_HEADER = 'x-onceflow-claim-check';

/** The claim-check reference format's version, the wire form's `ref` field. */
export const CLAIM_CHECK_VERSION = 1 as const;

/** The headers a reference carries besides its marker: trace context only. */
const REFERENCE_HEADERS = ['traceparent', 'tracestate', 'x-onceflow-trace-link'] as const;

/**
 * A claim-check reference on the wire: the event's reference without payload, body or other
 * headers. A decoder that predates it refuses it (no `enc`, no `payload`), so it is dead-lettered
 * as undecodable rather than handled with an empty payload.
 *
 * ```json
 * {"v":1,"ref":1,"id":"evt_1","source":"stripe","type":"charge.succeeded",
 *  "headers":{"traceparent":"…"},"receivedAt":"…","payloadHash":"…","key":"cus_9"}
 * ```
 */
export interface WireReference {
  readonly v: typeof WIRE_VERSION;
  readonly ref: typeof CLAIM_CHECK_VERSION;
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly receivedAt: string;
  readonly payloadHash: string;
  readonly key?: string;
  readonly occurredAt?: string;
}

const referenceSchema = z.object({
  v: z.literal(WIRE_VERSION),
  ref: z.literal(CLAIM_CHECK_VERSION),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.string(),
  key: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  receivedAt: z.string(),
  occurredAt: z.string().optional(),
  payloadHash: z.string(),
});

/**
 * The claim-check reference of an envelope: source, id, type, key, payload hash, receivedAt,
 * occurredAt and trace context, an empty payload and the `CLAIM_CHECK_HEADER` marker.
 * `encodeEnvelope` writes it as a `WireReference`; the worker loads the stored envelope for it.
 *
 * @example
 * const body = encodeEnvelope(claimCheckReference(envelope)); // no payload byte in it
 */
export function claimCheckReference(e: Envelope): Envelope {
  const headers: Record<string, string> = { [CLAIM_CHECK_HEADER]: String(CLAIM_CHECK_VERSION) };
  for (const name of REFERENCE_HEADERS) {
    const value = e.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return {
    id: e.id,
    source: e.source,
    type: e.type,
    key: e.key,
    payload: new Uint8Array(0),
    headers,
    receivedAt: e.receivedAt,
    occurredAt: e.occurredAt,
    payloadHash: e.payloadHash,
  };
}

/** Whether an envelope is a claim-check reference (its payload is in the record store). */
export function isClaimCheckReference(e: Envelope): boolean {
  return e.headers[CLAIM_CHECK_HEADER] !== undefined;
}

function toWireReference(e: Envelope): WireReference {
  const headers: Record<string, string> = {};
  for (const name of REFERENCE_HEADERS) {
    const value = e.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  const w: { -readonly [K in keyof WireReference]: WireReference[K] } = {
    v: WIRE_VERSION,
    ref: CLAIM_CHECK_VERSION,
    id: e.id,
    source: e.source,
    type: e.type,
    headers,
    receivedAt: e.receivedAt,
    payloadHash: e.payloadHash,
  };
  if (e.key !== undefined) w.key = e.key;
  if (e.occurredAt !== undefined) w.occurredAt = e.occurredAt;
  return w;
}

function fromWireReference(input: unknown): Envelope {
  const parsed = referenceSchema.safeParse(input);
  if (!parsed.success) {
    throw new WireFormatError(
      `not an onceflow v${WIRE_VERSION} claim-check reference: ${parsed.error.message}`,
    );
  }
  const w = parsed.data;
  return claimCheckReference({ ...w, payload: new Uint8Array(0) });
}

const isReferenceWire = (input: unknown): boolean =>
  typeof input === 'object' && input !== null && 'ref' in input;

/**
 * Serialises an envelope to wire format v1 (a UTF-8 JSON string); a claim-check reference
 * (`claimCheckReference`) as a `WireReference`.
 *
 * @example
 * const body = encodeEnvelope(env); // send as the broker message body
 */
export function encodeEnvelope(e: Envelope): string {
  return JSON.stringify(isClaimCheckReference(e) ? toWireReference(e) : toWire(e));
}

/**
 * Parses wire format v1 from a string or bytes: an envelope, or a claim-check reference (an
 * envelope with `CLAIM_CHECK_HEADER` and no payload). Throws `WireFormatError` on malformed input.
 *
 * @example
 * const env = decodeEnvelope(message.Body);
 */
export function decodeEnvelope(data: string | Uint8Array): Envelope {
  // A view on the bytes, not a copy of them (`Buffer.from(uint8Array)` would copy)
  const text =
    typeof data === 'string'
      ? data
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new WireFormatError(`envelope is not JSON: ${jsonSyntaxProblem(err)}`);
  }
  return isReferenceWire(json) ? fromWireReference(json) : fromWire(json);
}
