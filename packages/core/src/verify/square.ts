import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, toIso } from './event.js';
import { parseVerifiedJson, stringField } from './json.js';
import { requireHeader } from './request.js';

export const squarePreset: SenderPreset = Object.freeze({
  name: 'square',
  scheme:
    'HMAC-SHA256(signature key, notification URL + body), base64, header x-square-hmacsha256-signature',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'event_id' } as const),
  retryHorizonMs: DAY_MS,
  retryPolicy: 'exponential backoff for up to 24 hours, with the same event_id',
});

export interface SquareConfig {
  /** The subscription's signature keys. List several while rotating: any may match. */
  secrets: readonly string[];
  /**
   * The notification URL exactly as set in the Square Developer Console: Square signs it with the
   * body. Default: the URL the request arrived on (wrong behind a proxy that rewrites it).
   */
  notificationUrl?: string | undefined;
}

const schema = z.strictObject({ secrets: secretsSchema, notificationUrl: z.url().optional() });

/**
 * Square webhooks. Verifies `x-square-hmacsha256-signature` over the notification URL and the raw
 * body with every configured signature key; id = `event_id`, type = `type` (`payment.updated`),
 * key = `data.id`, occurredAt = `created_at`.
 *
 * Limit: the signature covers no timestamp, so a captured request can be replayed; the inbox's
 * id dedupe stops a replay within its retention.
 *
 * @example
 * const source = square({ secrets: [process.env.SQUARE_SIGNATURE_KEY!], notificationUrl: 'https://hooks.example.com/webhooks/square' });
 */
export function square(config: SquareConfig): Source {
  const { secrets, notificationUrl } = parseConfig('square config', schema, config);
  return {
    preset: squarePreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const header = requireHeader(request, 'x-square-hmacsha256-signature');
        const url = notificationUrl ?? request.url.href;
        const expected = secrets.map((s) => hmacDigest(s, [url, request.body]));
        if (!anyDigestMatches(expected, [decodeDigest(header, 'base64')]))
          throw new SignatureError('x-square-hmacsha256-signature does not match URL and body');
        const body = parseVerifiedJson(request.body, 'square');
        return [
          {
            eventId: requireEventId(stringField(body, 'event_id'), 'square', 'body.event_id'),
            type: requireType(stringField(body, 'type'), 'square', 'body.type'),
            key: stringField(body, 'data.id'),
            occurredAt: toIso(stringField(body, 'created_at')),
          },
        ];
      },
    },
  };
}
