import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { DAY_MS, DEFAULT_TOLERANCE_SEC, secretsSchema, toleranceSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, unixSecondsToIso } from './event.js';
import { field, type JsonObject, parseVerifiedJson, stringField } from './json.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';

export const stripePreset: SenderPreset = Object.freeze({
  name: 'stripe',
  scheme:
    'HMAC-SHA256(secret, t + "." + body), hex, header Stripe-Signature: t=…,v1=… (any v1 may match)',
  toleranceSec: DEFAULT_TOLERANCE_SEC,
  eventId: Object.freeze({ from: 'body', field: 'id' } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy: 'live mode: exponential backoff for up to 3 days; sandbox: 3 times over a few hours',
});

export interface StripeConfig {
  /** Endpoint signing secrets (`whsec_…`), used as given. List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between the signed `t` and now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({ secrets: secretsSchema, toleranceSec: toleranceSchema });

/** `t=…,v1=…,v1=…,v0=…` → the one timestamp and every v1 signature (v0 and unknown schemes ignored). */
function parseSignatureHeader(header: string): { t: number; v1: string[] } {
  const ts: string[] = [];
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (eq > 0 && name === 't') ts.push(value);
    else if (eq > 0 && name === 'v1') v1.push(value);
  }
  if (ts.length !== 1 || ts[0] === undefined) {
    throw new SignatureError('Stripe-Signature needs one t=');
  }
  if (v1.length === 0) throw new SignatureError('Stripe-Signature has no v1 signature');
  return { t: parseUnixSeconds(ts[0], 'Stripe-Signature t'), v1 };
}

/** The customer when the object names one (orders a customer's events), else the object's own id. */
function orderingKey(body: JsonObject): string | undefined {
  const object = field(field(body, 'data'), 'object');
  return stringField(object, 'customer') ?? stringField(object, 'id');
}

/**
 * Stripe webhooks. Verifies `Stripe-Signature` over the raw body with every configured secret,
 * rejects a `t` more than `toleranceSec` away from now (either way), then reads the event:
 * id = `id`, type = `type`, occurredAt = `created`, key = `data.object.customer` or `data.object.id`.
 * Stateless and safe to share between concurrent requests.
 *
 * @example
 * const source = stripe({ secrets: [process.env.STRIPE_WEBHOOK_SECRET!] });
 * const [event] = source.verifier.verify(request, new Date()); // event.eventId === 'evt_…'
 */
export function stripe(config: StripeConfig): Source {
  const { secrets, toleranceSec } = parseConfig('stripe config', schema, config);
  return {
    preset: { ...stripePreset, toleranceSec },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const { t, v1 } = parseSignatureHeader(requireHeader(request, 'stripe-signature'));
        const signed = [`${t}.`, request.body];
        const expected: Buffer[] = [];
        for (const secret of secrets) expected.push(hmacDigest(secret, signed));
        const received: (Buffer | undefined)[] = [];
        for (const sig of v1) received.push(decodeDigest(sig, 'hex'));
        if (!anyDigestMatches(expected, received)) {
          throw new SignatureError('no Stripe-Signature v1 matches the body');
        }
        assertFresh(t, now, toleranceSec);
        const body = parseVerifiedJson(request.body, 'stripe');
        return [
          {
            eventId: requireEventId(stringField(body, 'id'), 'stripe', 'body.id'),
            type: requireType(stringField(body, 'type'), 'stripe', 'body.type'),
            key: orderingKey(body),
            occurredAt: unixSecondsToIso(body.created),
          },
        ];
      },
    },
  };
}
