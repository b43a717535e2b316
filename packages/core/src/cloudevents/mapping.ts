import type { VerifiedEvent } from '../contracts/verifier.js';
import { type Envelope, hashPayload } from '../envelope.js';
import { BadRequestError } from '../errors.js';
import { toIso } from '../verify/event.js';
import {
  ATTRIBUTE_NAME,
  type CloudEventJson,
  isJsonType,
  isTextType,
  type ParsedCloudEvent,
  REQUIRED,
  SPEC_VERSION,
} from './attributes.js';

/** Envelope header prefix of a CloudEvent's attributes (`ce-source`, `ce-subject`, extensions). */
export const CE_HEADER = 'ce-';

/**
 * How an envelope id is made from a CloudEvent: `source+id` (the default) is `<source> <id>`, so
 * two producers that reuse an id are never taken for duplicates (the spec makes `id` unique per
 * `source` only); `id` is the `id` alone, for an endpoint with one producer. The original `id`
 * and `source` stay on the envelope as `ce-id` and `ce-source` either way.
 */
export type CloudEventDedupe = 'source+id' | 'id';

/**
 * Where the ordering key comes from: `subject` (the default; else the `partitionkey` extension),
 * or a named extension.
 */
export type CloudEventKeyFrom = 'subject' | { readonly extension: string };

export interface CloudEventMapping {
  readonly dedupe?: CloudEventDedupe | undefined;
  readonly key?: CloudEventKeyFrom | undefined;
}

const text = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A structured-mode object (one batch entry) as attributes and data bytes; `BadRequestError` if it is none. */
export function parseStructured(value: unknown): ParsedCloudEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequestError('cloudevents: a structured event is a JSON object');
  }
  const attributes: Record<string, string> = {};
  let data: Uint8Array | undefined;
  const ce = value as Record<string, unknown>;
  for (const [name, v] of Object.entries(ce)) {
    if (name === 'data' || name === 'data_base64' || v === null || v === undefined) continue;
    if (typeof v === 'object')
      throw new BadRequestError(`cloudevents: attribute ${name} is not a scalar`);
    attributes[name] = String(v);
  }
  if (typeof ce.data_base64 === 'string') data = Buffer.from(ce.data_base64, 'base64');
  else if (ce.data !== undefined && ce.data !== null) {
    const ct = attributes.datacontenttype;
    data =
      typeof ce.data === 'string' && !isJsonType(ct)
        ? text.encode(ce.data)
        : text.encode(JSON.stringify(ce.data));
  }
  return { attributes, data };
}

/**
 * What the receiver vouches for in one CloudEvent: id per `dedupe`, `type`, key per `key`,
 * occurredAt = `time`, payload = the data bytes, and every other attribute as an envelope header
 * (`ce-<name>`; `datacontenttype` as `content-type`). `BadRequestError` (→ 400) for a missing
 * required attribute, another spec version or an invalid attribute name.
 */
export function verifiedOf(ce: ParsedCloudEvent, mapping: CloudEventMapping = {}): VerifiedEvent {
  const a = ce.attributes;
  for (const name of REQUIRED) {
    if (!a[name]) throw new BadRequestError(`cloudevents: no ${name}`);
  }
  if (a.specversion !== SPEC_VERSION) {
    throw new BadRequestError(`cloudevents: specversion ${a.specversion} (only ${SPEC_VERSION})`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(a)) {
    if (!ATTRIBUTE_NAME.test(name)) {
      throw new BadRequestError(`cloudevents: attribute name ${name} is not [a-z0-9]{1,20}`);
    }
    if (name === 'type' || name === 'time') continue;
    headers[name === 'datacontenttype' ? 'content-type' : `${CE_HEADER}${name}`] = value;
  }
  if (ce.data !== undefined && a.datacontenttype === undefined)
    headers['content-type'] = 'application/json';
  const from = mapping.key ?? 'subject';
  return {
    eventId: (mapping.dedupe ?? 'source+id') === 'id' ? a.id! : `${a.source} ${a.id}`,
    type: a.type!,
    key: from === 'subject' ? (a.subject ?? a.partitionkey) : a[from.extension],
    occurredAt: a.time === undefined ? undefined : toIso(a.time),
    payload: ce.data ?? new Uint8Array(0),
    headers,
  };
}

/**
 * The envelope of a CloudEvent (JSON format), as the receiver makes it from an HTTP delivery of
 * that event on the source named `source`. The inverse of `toCloudEvent` for such envelopes.
 *
 * @example
 * const envelope = fromCloudEvent({ specversion: '1.0', id: 'A1', source: '/orders', type: 'order.created', data: { n: 1 } }, { source: 'orders' });
 * envelope.id; // '/orders A1'
 */
export function fromCloudEvent(
  ce: CloudEventJson,
  options: CloudEventMapping & { readonly source: string; readonly receivedAt?: Date | undefined },
): Envelope {
  const e = verifiedOf(parseStructured(ce), options);
  const payload = e.payload ?? new Uint8Array(0);
  return {
    id: e.eventId,
    source: options.source,
    type: e.type,
    key: e.key,
    payload,
    headers: { ...e.headers },
    receivedAt: (options.receivedAt ?? new Date()).toISOString(),
    occurredAt: e.occurredAt,
    payloadHash: hashPayload(payload),
  };
}

/** Envelope headers other CloudEvents consumers understand as extensions of the same name. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/**
 * The CloudEvent (JSON format) of an envelope. One that came in as a CloudEvent maps back to its
 * own attributes (`ce-*` headers; `type`; `time` = occurredAt); any other gets `id` = the envelope
 * id, `source` = the source name, `time`, `datacontenttype` = its content type, the key as the
 * `partitionkey` extension and trace context as `traceparent`/`tracestate`. Data: JSON media types
 * as `data` (parsed), text as a `data` string, anything else as `data_base64`; no payload, no data.
 *
 * @example
 * const ce = toCloudEvent(envelope); // new CloudEvent(ce) with the `cloudevents` SDK
 */
export function toCloudEvent(envelope: Envelope): CloudEventJson {
  const h = envelope.headers;
  const fromCe = h[`${CE_HEADER}specversion`] !== undefined;
  const ce: Record<string, unknown> = {
    specversion: SPEC_VERSION,
    id: envelope.id,
    source: envelope.source,
    type: envelope.type,
  };
  if (envelope.occurredAt !== undefined) ce.time = envelope.occurredAt;
  if (fromCe) {
    for (const [name, value] of Object.entries(h)) {
      if (name.startsWith(CE_HEADER)) ce[name.slice(CE_HEADER.length)] = value;
    }
  } else {
    if (envelope.key !== undefined) ce.partitionkey = envelope.key;
    for (const name of TRACE_HEADERS) if (h[name] !== undefined) ce[name] = h[name];
  }
  const contentType = h['content-type'];
  if (contentType !== undefined) ce.datacontenttype = contentType;
  Object.assign(ce, dataOf(envelope.payload, contentType, fromCe));
  return ce as CloudEventJson;
}

function dataOf(payload: Uint8Array, contentType: string | undefined, fromCe: boolean) {
  if (payload.length === 0 && (fromCe || contentType === undefined)) return {};
  try {
    const decoded = utf8.decode(payload);
    if (isJsonType(contentType)) return { data: JSON.parse(decoded) as unknown };
    if (isTextType(contentType)) return { data: decoded };
  } catch {
    // not UTF-8, or not JSON: carried as bytes
  }
  return { data_base64: Buffer.from(payload).toString('base64') };
}
