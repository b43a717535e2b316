import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { HOUR_MS, secretsSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, toIso } from './event.js';
import { idField, stringField, tryParseJson } from './json.js';
import { optionalHeader, requireHeader } from './request.js';

export const shopifyPreset: SenderPreset = Object.freeze({
  name: 'shopify',
  scheme: 'HMAC-SHA256(client secret, body), base64, header X-Shopify-Hmac-Sha256',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'header', field: 'X-Shopify-Event-Id' } as const),
  retryHorizonMs: 4 * HOUR_MS,
  retryPolicy: '8 retries over 4 hours with exponential backoff, each with the original payload',
});

export interface ShopifyConfig {
  /** App client secrets. List several while rotating (a new secret can take up to an hour to apply): any may match. */
  secrets: readonly string[];
}

const schema = z.strictObject({ secrets: secretsSchema });

/**
 * Shopify webhooks (HTTPS delivery). Verifies `X-Shopify-Hmac-Sha256` over the raw body with every
 * configured secret; id = `X-Shopify-Event-Id` (else `X-Shopify-Webhook-Id`), type =
 * `X-Shopify-Topic`, occurredAt = `X-Shopify-Triggered-At`, key = the resource's
 * `admin_graphql_api_id` (else `id`) when the body is JSON.
 *
 * Limit: the signature covers neither a timestamp nor the headers, so a captured delivery can be
 * replayed, and replayed under new id headers that the inbox will not recognise.
 *
 * @example
 * const source = shopify({ secrets: [process.env.SHOPIFY_CLIENT_SECRET!] });
 * const [event] = source.verifier.verify(request, new Date()); // event.type === 'orders/create'
 */
export function shopify(config: ShopifyConfig): Source {
  const { secrets } = parseConfig('shopify config', schema, config);
  return {
    preset: shopifyPreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const digest = decodeDigest(requireHeader(request, 'x-shopify-hmac-sha256'), 'base64');
        const expected = secrets.map((s) => hmacDigest(s, [request.body]));
        if (!anyDigestMatches(expected, [digest])) {
          throw new SignatureError('X-Shopify-Hmac-Sha256 does not match the body');
        }
        const eventId =
          optionalHeader(request, 'x-shopify-event-id') ??
          optionalHeader(request, 'x-shopify-webhook-id');
        // Shopify can deliver XML too; the key is optional, so a non-JSON body is not an error.
        const body = tryParseJson(request.body);
        return [
          {
            eventId: requireEventId(
              eventId,
              'shopify',
              'X-Shopify-Event-Id / X-Shopify-Webhook-Id',
            ),
            type: requireType(
              optionalHeader(request, 'x-shopify-topic'),
              'shopify',
              'X-Shopify-Topic',
            ),
            key: stringField(body, 'admin_graphql_api_id') ?? idField(body, 'id'),
            occurredAt: toIso(optionalHeader(request, 'x-shopify-triggered-at')),
          },
        ];
      },
    },
  };
}
