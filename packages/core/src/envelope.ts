import * as crypto from 'node:crypto';

/**
 * One event as it travels from the receiver to a handler. Every adapter carries it with the
 * same wire format (see `wire.ts`), so an envelope published on one broker reads the same on another.
 *
 * `payload` holds the sender's raw body byte-for-byte; `payloadHash` is its sha-256 (hex), which the
 * inbox compares to tell a duplicate (same id, same bytes) from a conflict (same id, other bytes).
 */
export interface Envelope {
  /** The sender's event id: the idempotency key for the whole pipeline. */
  readonly id: string;
  /** The configured source name (`stripe`, `github`, `orders-service`, …). */
  readonly source: string;
  /** The event type (`payment_intent.succeeded`, `push`, …). */
  readonly type: string;
  /** Ordering / partition key, e.g. the aggregate id. Absent when the sender gives none. */
  readonly key?: string | undefined;
  /** The raw body, exactly as received. */
  readonly payload: Uint8Array;
  /** Metadata carried end to end (content type, trace context, …). Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** When the receiver accepted it (ISO-8601). */
  readonly receivedAt: string;
  /** When the sender says it happened (ISO-8601), if it says. */
  readonly occurredAt?: string | undefined;
  /** sha-256 of `payload`, lower-case hex. */
  readonly payloadHash: string;
}

export interface EnvelopeInit {
  id: string;
  source: string;
  type: string;
  key?: string | undefined;
  /** Bytes are kept as they are; a string is UTF-8 encoded; anything else is JSON-encoded. */
  payload: Uint8Array | string | unknown;
  headers?: Record<string, string> | undefined;
  receivedAt?: Date | string | undefined;
  occurredAt?: Date | string | undefined;
}

type OneShotHash = (algorithm: string, data: Uint8Array, encoding: 'hex') => string;
/** node's one-shot `crypto.hash` (node >= 20.12, 21.7): same digest, no Hash object per call. */
const oneShot = (crypto as { hash?: OneShotHash }).hash;

/**
 * sha-256 of the bytes, lower-case hex.
 *
 * @example
 * hashPayload(new TextEncoder().encode('{}')); // '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'
 */
export function hashPayload(bytes: Uint8Array): string {
  if (oneShot) return oneShot('sha256', bytes, 'hex');
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

const toIso = (d: Date | string): string => (typeof d === 'string' ? d : d.toISOString());

function toBytes(payload: EnvelopeInit['payload']): Uint8Array {
  if (payload instanceof Uint8Array) return payload;
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/**
 * Builds an envelope, hashing the payload. Use it to publish events from your own services.
 *
 * @example
 * const env = createEnvelope({ id: 'ord_1:created', source: 'orders', type: 'order.created', key: 'ord_1', payload: { total: 42 } });
 */
export function createEnvelope(init: EnvelopeInit): Envelope {
  const payload = toBytes(init.payload);
  const headers: Record<string, string> = {};
  if (!(init.payload instanceof Uint8Array) && typeof init.payload !== 'string') {
    headers['content-type'] = 'application/json';
  }
  for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
  return {
    id: init.id,
    source: init.source,
    type: init.type,
    key: init.key,
    payload,
    headers,
    receivedAt: toIso(init.receivedAt ?? new Date()),
    occurredAt: init.occurredAt === undefined ? undefined : toIso(init.occurredAt),
    payloadHash: hashPayload(payload),
  };
}

const decoder = new TextDecoder();

/** The payload parsed as JSON. Throws a SyntaxError on bytes that are not JSON. */
export function payloadJson(envelope: Envelope): unknown {
  return JSON.parse(decoder.decode(envelope.payload));
}
