import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, secretsSchema } from '../verify/config.js';
import { secretEquals } from '../verify/crypto.js';
import { answerHandshake } from './handshake.js';
import { cloudEventsOf } from './http.js';
import { type CloudEventDedupe, type CloudEventKeyFrom, verifiedOf } from './mapping.js';

export const cloudEventsPreset: SenderPreset = Object.freeze({
  name: 'cloudevents',
  scheme:
    'CloudEvents HTTP binding 1.0 (binary, structured, batched); Authorization: Bearer <token> or ?access_token= (Webhook spec 1.0, 3.)',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'source + id (ce-source, ce-id)' } as const),
  handshake: 'OPTIONS with WebHook-Request-Origin → 200 WebHook-Allowed-Origin (abuse protection)',
  handshakeMethods: Object.freeze(['OPTIONS']),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy: 'set by the producer; 3 days assumed unless configured',
});

export interface CloudEventsConfig {
  /**
   * Access tokens the producer sends as `Authorization: Bearer <token>` (or `?access_token=`),
   * compared in constant time. List several while rotating: any may match. Required unless
   * `unauthenticated: true`.
   */
  secrets?: readonly string[] | undefined;
  /** Accept deliveries without a token. Only behind something else that authenticates them. */
  unauthenticated?: boolean | undefined;
  /** Origins the abuse-protection handshake allows (`WebHook-Request-Origin`). Default: any. */
  allowedOrigins?: readonly string[] | undefined;
  /** `WebHook-Allowed-Rate` answered when a rate is asked for. Default `*`. */
  allowedRate?: string | undefined;
  /** Envelope id: `source+id` (default) or `id`; see `CloudEventDedupe`. */
  dedupe?: CloudEventDedupe | undefined;
  /** Ordering key: `subject` (default, else `partitionkey`) or `{ extension }`. */
  key?: CloudEventKeyFrom | undefined;
  /** How long the producer keeps redelivering one event, in ms. Default 3 days. */
  retryHorizonMs?: number | undefined;
}

const schema = z
  .strictObject({
    secrets: secretsSchema.optional(),
    unauthenticated: z.boolean().default(false),
    allowedOrigins: z.array(z.string().min(1)).optional(),
    allowedRate: z
      .string()
      .regex(/^(\*|\d+)$/)
      .default('*'),
    dedupe: z.enum(['source+id', 'id']).default('source+id'),
    key: z
      .union([
        z.literal('subject'),
        z.strictObject({ extension: z.string().regex(/^[a-z0-9]{1,20}$/) }),
      ])
      .default('subject'),
    retryHorizonMs: z.number().int().positive().default(cloudEventsPreset.retryHorizonMs),
  })
  .refine((c) => c.secrets !== undefined || c.unauthenticated, {
    message: 'set secrets (bearer tokens) or unauthenticated: true',
  });

const BEARER = /^Bearer\s+(.+)$/i;

/** The token the request carries, header first; undefined when it carries none. */
function tokenOf(request: IncomingWebhook): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) return BEARER.exec(header)?.[1]?.trim();
  return request.url.searchParams.get('access_token') ?? undefined;
}

/**
 * Any CloudEvents producer over HTTP (binding 1.0): binary mode, structured mode and batches
 * (`application/cloudevents-batch+json`, one envelope per event, answered together). Checks the
 * bearer token first, then reads id, type (`type`), key (`subject`), occurredAt (`time`) and the
 * data bytes as the payload; every other attribute travels as a `ce-*` envelope header, so
 * `toCloudEvent(envelope)` gives the event back. Answers the OPTIONS abuse-protection handshake.
 *
 * Limits: a bearer token is not a signature; keep the endpoint on HTTPS. A structured event's
 * JSON `data` is re-serialised (`JSON.stringify`), not kept byte for byte.
 *
 * @example
 * const source = cloudEvents({ secrets: [process.env.CE_TOKEN!] });
 * // POST /webhooks/orders, ce-specversion: 1.0, ce-id: A1, ce-source: /orders, ce-type: order.created
 */
export function cloudEvents(config: CloudEventsConfig): Source {
  const c = parseConfig('cloudevents config', schema, config);
  const secrets = c.secrets;
  const authenticate = (request: IncomingWebhook) => {
    if (secrets === undefined) return;
    const token = tokenOf(request);
    let matched = false;
    for (const s of secrets) matched = (token !== undefined && secretEquals(s, token)) || matched;
    if (!matched) throw new SignatureError('cloudevents: no valid bearer token');
  };
  return {
    preset: { ...cloudEventsPreset, retryHorizonMs: c.retryHorizonMs },
    verifier: {
      handshake: (request) => answerHandshake(request, c),
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        authenticate(request);
        return cloudEventsOf(request).map((ce) => verifiedOf(ce, c));
      },
    },
  };
}
