import type { Envelope } from '../envelope.js';
import { hashPayload } from '../envelope.js';
import { WireFormatError } from '../errors.js';
import { ATTRIBUTE_NAME, REQUIRED, SPEC_VERSION } from './attributes.js';
import { CE_HEADER } from './mapping.js';

/**
 * A CloudEvents protocol binding's binary content mode, as far as onceflow needs it: the prefix
 * of attribute headers (Kafka `ce_`, AMQP `cloudEvents_`), and others read too (AMQP's older
 * `cloudEvents:`). `datacontenttype` is the message's content type, the data its body.
 */
export interface CloudEventsBinding {
  readonly prefix: string;
  readonly alsoRead?: readonly string[] | undefined;
}

/** Kafka protocol binding 1.0: `ce_<attribute>` headers, `content-type` header. */
export const KAFKA_BINDING: CloudEventsBinding = Object.freeze({ prefix: 'ce_' });
/** AMQP protocol binding 1.0: `cloudEvents_<attribute>` application properties (`cloudEvents:` read too). */
export const AMQP_BINDING: CloudEventsBinding = Object.freeze({
  prefix: 'cloudEvents_',
  alsoRead: Object.freeze(['cloudEvents:']),
});

/** The attributes and content type of one binary-mode message; the body is the payload. */
export interface BinaryAttributes {
  /** Attribute headers, prefixed for the binding. */
  readonly headers: Record<string, string>;
  readonly contentType: string | undefined;
}

/**
 * Extensions onceflow adds so that its own consumers get the envelope back exactly: envelope id
 * and source where they differ from the CloudEvent's, key, receivedAt, payload hash, the
 * envelope headers that are no attribute (JSON), and which attributes it derived for other
 * consumers (`partitionkey` from the key, `traceparent`, and `id`/`source`/`specversion` of an
 * envelope that did not come in as a CloudEvent).
 */
const X = {
  id: 'onceflowid',
  source: 'onceflowsource',
  key: 'onceflowkey',
  received: 'onceflowreceived',
  hash: 'onceflowhash',
  headers: 'onceflowheaders',
  derived: 'onceflowderived',
} as const;
/** Attributes that never come from a `ce-*` envelope header. */
const OWN = new Set(['type', 'time', 'datacontenttype', ...Object.values(X)]);
const TRACE = ['traceparent', 'tracestate'] as const;

/**
 * The envelope as a CloudEvent in a binding's binary mode: `id`/`source` the CloudEvent's own
 * (`ce-id`/`ce-source`) or the envelope's, `type`, `time` = occurredAt, `partitionkey` = key,
 * every `ce-*` header as its attribute, the payload as data, plus onceflow's extensions (`X`).
 * Other consumers read an ordinary CloudEvent; `decodeBinary` reads the same envelope back.
 *
 * @example
 * const { headers, contentType } = encodeBinary(envelope, KAFKA_BINDING); // value: envelope.payload
 */
export function encodeBinary(e: Envelope, binding: CloudEventsBinding): BinaryAttributes {
  const attrs: Record<string, string> = {};
  const rest: Record<string, string> = {};
  const derived: string[] = [];
  for (const name in e.headers) {
    const value = e.headers[name]!;
    if (name === 'content-type') continue;
    const attr = name.startsWith(CE_HEADER) ? name.slice(CE_HEADER.length) : undefined;
    if (attr !== undefined && ATTRIBUTE_NAME.test(attr) && !OWN.has(attr)) attrs[attr] = value;
    else rest[name] = value;
  }
  if (attrs.specversion !== SPEC_VERSION) {
    if (attrs.specversion !== undefined) rest[`${CE_HEADER}specversion`] = attrs.specversion;
    attrs.specversion = SPEC_VERSION;
    derived.push('specversion');
  }
  const derive = (name: string, value: string | undefined) => {
    if (value === undefined || attrs[name] !== undefined) return;
    attrs[name] = value;
    derived.push(name);
  };
  derive('id', e.id);
  derive('source', e.source);
  derive('partitionkey', e.key);
  for (const name of TRACE) derive(name, rest[name]);
  attrs.type = e.type;
  if (e.occurredAt !== undefined) attrs.time = e.occurredAt;
  if (attrs.id !== e.id) attrs[X.id] = e.id;
  if (attrs.source !== e.source) attrs[X.source] = e.source;
  if (e.key !== undefined) attrs[X.key] = e.key;
  attrs[X.received] = e.receivedAt;
  attrs[X.hash] = e.payloadHash;
  if (Object.keys(rest).length > 0) attrs[X.headers] = JSON.stringify(rest);
  if (derived.length > 0) attrs[X.derived] = derived.join(',');
  const headers: Record<string, string> = {};
  for (const name in attrs) headers[`${binding.prefix}${name}`] = attrs[name]!;
  return { headers, contentType: e.headers['content-type'] };
}

/** A header value as text (brokers hand them over as strings, bytes or numbers). */
function text(v: unknown): string | undefined {
  const one = Array.isArray(v) ? (v as unknown[])[0] : v;
  if (typeof one === 'string') return one;
  if (one instanceof Uint8Array) return Buffer.from(one).toString('utf8');
  return typeof one === 'number' || typeof one === 'boolean' ? String(one) : undefined;
}

/** Each binding's `specversion` header names, built once: every received message is asked. */
const specversionNames = new WeakMap<CloudEventsBinding, readonly string[]>();

/** True when the message headers hold a binary-mode CloudEvent for this binding. */
export function isBinaryCloudEvent(
  headers: Readonly<Record<string, unknown>> | undefined,
  binding: CloudEventsBinding,
): boolean {
  if (headers === undefined) return false;
  let names = specversionNames.get(binding);
  if (names === undefined) {
    names = [binding.prefix, ...(binding.alsoRead ?? [])].map((p) => `${p}specversion`);
    specversionNames.set(binding, names);
  }
  for (const name of names) if (headers[name] !== undefined) return true;
  return false;
}

/** The message's attribute headers (any of the binding's prefixes), to carry over to a copy. */
export function binaryHeaders(
  headers: Readonly<Record<string, unknown>> | undefined,
  binding: CloudEventsBinding,
): Record<string, string> {
  const kept: Record<string, string> = {};
  const prefixes = [binding.prefix, ...(binding.alsoRead ?? [])];
  for (const name in headers) {
    if (!prefixes.some((p) => name.startsWith(p))) continue;
    const value = text(headers[name]);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * Reads a binary-mode CloudEvent back as an envelope: exactly the one `encodeBinary` wrote, or,
 * for a message another producer wrote, id = `id`, source = `source`, key = `partitionkey` (else
 * `subject`), receivedAt = now, every other attribute as a `ce-*` header. Throws
 * `WireFormatError` when a required attribute is missing.
 */
export function decodeBinary(
  headers: Readonly<Record<string, unknown>>,
  contentType: string | undefined,
  body: Uint8Array,
  binding: CloudEventsBinding,
): Envelope {
  const attrs: Record<string, string> = {};
  for (const prefix of [...(binding.alsoRead ?? []), binding.prefix]) {
    for (const name in headers) {
      if (!name.startsWith(prefix)) continue;
      const value = text(headers[name]);
      if (value !== undefined) attrs[name.slice(prefix.length)] = value;
    }
  }
  for (const name of REQUIRED) {
    if (!attrs[name]) throw new WireFormatError(`cloudevents binary message has no ${name}`);
  }
  const ours = attrs[X.received] !== undefined;
  const derived = new Set((attrs[X.derived] ?? '').split(',').filter(Boolean));
  const envelopeHeaders: Record<string, string> = {};
  if (attrs[X.headers] !== undefined) {
    try {
      Object.assign(envelopeHeaders, JSON.parse(attrs[X.headers]!) as Record<string, string>);
    } catch {
      throw new WireFormatError(`cloudevents binary message: ${X.headers} is not JSON`);
    }
  }
  for (const name in attrs) {
    if (OWN.has(name) || derived.has(name)) continue;
    envelopeHeaders[`${CE_HEADER}${name}`] = attrs[name]!;
  }
  if (contentType !== undefined) envelopeHeaders['content-type'] = contentType;
  const payload = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return {
    id: attrs[X.id] ?? attrs.id!,
    source: attrs[X.source] ?? attrs.source!,
    type: attrs.type!,
    key: ours ? attrs[X.key] : (attrs.partitionkey ?? attrs.subject),
    payload,
    headers: envelopeHeaders,
    receivedAt: attrs[X.received] ?? new Date().toISOString(),
    occurredAt: attrs.time,
    payloadHash: attrs[X.hash] ?? hashPayload(payload),
  };
}
