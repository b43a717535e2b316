/**
 * A CloudEvent (spec 1.0) in its JSON format: context attributes, extension attributes beside
 * them, and `data` (JSON or text) or `data_base64` (bytes). The shape `new CloudEvent(…)` of the
 * `cloudevents` SDK takes and `JSON.parse` of a structured-mode body gives.
 */
export interface CloudEventJson {
  readonly specversion: string;
  readonly id: string;
  /** A URI-reference naming the producer; `id` is unique per `source`. */
  readonly source: string;
  readonly type: string;
  readonly subject?: string | undefined;
  /** RFC 3339. */
  readonly time?: string | undefined;
  readonly datacontenttype?: string | undefined;
  readonly dataschema?: string | undefined;
  readonly data?: unknown;
  readonly data_base64?: string | undefined;
  /** Extension attributes: lower-case letters and digits, at most 20 characters. */
  readonly [extension: string]: unknown;
}

/** One CloudEvent as read off the wire: every attribute as a string, data as bytes. */
export interface ParsedCloudEvent {
  /** Context and extension attributes (`datacontenttype` included), by name. */
  readonly attributes: Readonly<Record<string, string>>;
  readonly data: Uint8Array | undefined;
}

export const SPEC_VERSION = '1.0';
export const REQUIRED = ['specversion', 'id', 'source', 'type'] as const;
/** Context attributes that are not extensions. */
export const CONTEXT = new Set([
  'specversion',
  'id',
  'source',
  'type',
  'subject',
  'time',
  'datacontenttype',
  'dataschema',
]);
/** A valid extension (or any attribute) name, per the spec. */
export const ATTRIBUTE_NAME = /^[a-z0-9]{1,20}$/;

export const MIME_STRUCTURED = 'application/cloudevents+json';
export const MIME_BATCH = 'application/cloudevents-batch+json';

/** True for a JSON media type (`application/json`, `…+json`, parameters ignored). */
export function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true; // the JSON format's default
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

/** True for a text media type whose bytes are carried as a JSON string. */
export function isTextType(contentType: string | undefined): boolean {
  return contentType?.trim().toLowerCase().startsWith('text/') === true;
}
