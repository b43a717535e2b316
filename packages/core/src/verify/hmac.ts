import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { DAY_MS, secretsSchema, toleranceSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import {
  anyDigestMatches,
  type DigestEncoding,
  decodeDigest,
  type HmacAlgorithm,
  hmacDigest,
} from './crypto.js';
import { requireEventId, requireType, toIso, unixSecondsToIso } from './event.js';
import { field, idField, type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { assertFresh, optionalHeader, parseUnixSeconds, requireHeader } from './request.js';

export const hmacPreset: SenderPreset = Object.freeze({
  name: 'hmac',
  scheme:
    'HMAC-SHA256(secret, body) by default; header, encoding, prefix and a signed timestamp are configurable',
  toleranceSec: null,
  eventId: Object.freeze({
    from: 'body',
    field: 'configured: eventIdField or eventIdHeader',
  } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy: 'set by your sender; 3 days assumed unless configured',
});

export interface HmacConfig {
  /** Shared secrets, used as UTF-8 keys. List several while rotating: any may match. */
  secrets: readonly string[];
  /** The header carrying the signature, e.g. `x-signature`. */
  header: string;
  /** Default `sha256`. */
  algorithm?: HmacAlgorithm | undefined;
  /** How the digest is written. Default `hex`. */
  encoding?: DigestEncoding | undefined;
  /** Text before the digest in the header, e.g. `sha256=`. Default none. */
  prefix?: string | undefined;
  /** A header with a signed unix timestamp; the signed content is then `timestamp + "." + body`. */
  timestampHeader?: string | undefined;
  /** With `timestampHeader`: accepted distance from now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
  /** Dotted body path of the event id (`id`, `data.event_id`). Preferred: the body is signed. */
  eventIdField?: string | undefined;
  /** Header carrying the event id, used when `eventIdField` is unset or absent. Not signed: see below. */
  eventIdHeader?: string | undefined;
  /** Dotted body path of the event type. */
  typeField?: string | undefined;
  /** Header carrying the event type (takes precedence over `typeField`). */
  typeHeader?: string | undefined;
  /** Type used when neither `typeField` nor `typeHeader` is configured. Default `webhook`. */
  defaultType?: string | undefined;
  /** Dotted body path of the ordering key. */
  keyField?: string | undefined;
  /** Dotted body path of when it happened: ISO-8601 or unix seconds. */
  occurredAtField?: string | undefined;
  /** How long your sender keeps retrying one event, in ms. Default 3 days. */
  retryHorizonMs?: number | undefined;
  /** One line on how your sender retries. */
  retryPolicy?: string | undefined;
}

const headerName = z
  .string()
  .min(1)
  .transform((h) => h.toLowerCase());
const path = z.string().min(1);
const schema = z
  .strictObject({
    secrets: secretsSchema,
    header: headerName,
    algorithm: z.enum(['sha256', 'sha384', 'sha512']).default('sha256'),
    encoding: z.enum(['hex', 'base64', 'base64url']).default('hex'),
    prefix: z.string().default(''),
    timestampHeader: headerName.optional(),
    toleranceSec: toleranceSchema,
    eventIdField: path.optional(),
    eventIdHeader: headerName.optional(),
    typeField: path.optional(),
    typeHeader: headerName.optional(),
    defaultType: z.string().min(1).default('webhook'),
    keyField: path.optional(),
    occurredAtField: path.optional(),
    retryHorizonMs: z.number().int().positive().default(hmacPreset.retryHorizonMs),
    retryPolicy: z.string().min(1).default(hmacPreset.retryPolicy),
  })
  .refine((c) => c.eventIdField !== undefined || c.eventIdHeader !== undefined, {
    message: 'set eventIdField or eventIdHeader: without an event id nothing can be deduped',
  });

type Resolved = z.output<typeof schema>;

function presetFor(c: Resolved): SenderPreset {
  const signed = c.timestampHeader === undefined ? 'body' : `${c.timestampHeader} + "." + body`;
  return {
    name: 'hmac',
    scheme: `HMAC-${c.algorithm.toUpperCase()}(secret, ${signed}), ${c.encoding}, header ${c.header}${c.prefix ? `: ${c.prefix}…` : ''}`,
    toleranceSec: c.timestampHeader === undefined ? null : c.toleranceSec,
    eventId:
      c.eventIdField !== undefined
        ? { from: 'body', field: c.eventIdField }
        : { from: 'header', field: c.eventIdHeader ?? '' },
    retryHorizonMs: c.retryHorizonMs,
    retryPolicy: c.retryPolicy,
  };
}

function readEvent(request: IncomingWebhook, c: Resolved): VerifiedEvent {
  const needsBody = [c.eventIdField, c.typeField, c.keyField, c.occurredAtField].some(
    (f) => f !== undefined,
  );
  const body: JsonObject | undefined = needsBody
    ? parseVerifiedJson(request.body, 'hmac')
    : undefined;
  const fromBody = (p: string | undefined) => (p === undefined ? undefined : idField(body, p));
  const headerId =
    c.eventIdHeader === undefined ? undefined : optionalHeader(request, c.eventIdHeader);
  const eventId = fromBody(c.eventIdField) ?? headerId;
  const type =
    c.typeHeader !== undefined
      ? optionalHeader(request, c.typeHeader)
      : c.typeField !== undefined
        ? stringField(body, c.typeField)
        : c.defaultType;
  const when = c.occurredAtField === undefined ? undefined : field(body, c.occurredAtField);
  return {
    eventId: requireEventId(eventId, 'hmac', c.eventIdField ?? c.eventIdHeader ?? ''),
    type: requireType(type, 'hmac', c.typeHeader ?? c.typeField ?? ''),
    key: fromBody(c.keyField),
    occurredAt:
      typeof when === 'string' && !/^\d+$/.test(when) ? toIso(when) : unixSecondsToIso(when),
  };
}

/**
 * A generic HMAC sender (your own services, or one without a preset): the digest of the raw body
 * (or of `timestamp.body` when `timestampHeader` is set) in one header, any configured secret may
 * match. Id, type, key and time come from the configured body paths or headers.
 *
 * Limits: without `timestampHeader` nothing stops a replay of a captured request; an id taken from
 * `eventIdHeader` is not signed, so a replay can also dodge the inbox under a new id.
 *
 * @example
 * const source = hmac({ secrets: [secret], header: 'x-signature', prefix: 'sha256=', eventIdField: 'id', typeField: 'type' });
 * const [event] = source.verifier.verify(request, new Date());
 */
export function hmac(config: HmacConfig): Source {
  const c = parseConfig('hmac config', schema, config);
  return {
    preset: presetFor(c),
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const header = requireHeader(request, c.header);
        const timestamp =
          c.timestampHeader === undefined ? undefined : requireHeader(request, c.timestampHeader);
        const digest = header.startsWith(c.prefix)
          ? decodeDigest(header.slice(c.prefix.length), c.encoding)
          : undefined;
        const parts = timestamp === undefined ? [request.body] : [`${timestamp}.`, request.body];
        const expected = c.secrets.map((s) => hmacDigest(s, parts, c.algorithm));
        if (!anyDigestMatches(expected, [digest])) {
          throw new SignatureError(`${c.header} does not match the body`);
        }
        if (timestamp !== undefined) {
          assertFresh(parseUnixSeconds(timestamp, c.timestampHeader ?? ''), now, c.toleranceSec);
        }
        return [readEvent(request, c)];
      },
    },
  };
}
