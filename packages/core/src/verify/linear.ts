import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { HOUR_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, toIso } from './event.js';
import { idField, parseVerifiedJson, stringField } from './json.js';
import { optionalHeader, requireHeader } from './request.js';

/** Linear's own SDK accepts a `webhookTimestamp` at most 60 s away. */
const LINEAR_TOLERANCE_SEC = 60;

export const linearPreset: SenderPreset = Object.freeze({
  name: 'linear',
  scheme:
    'HMAC-SHA256(signing secret, body), hex, header Linear-Signature; body webhookTimestamp (ms) checked',
  toleranceSec: LINEAR_TOLERANCE_SEC,
  eventId: Object.freeze({ from: 'header', field: 'Linear-Delivery' } as const),
  retryHorizonMs: 8 * HOUR_MS,
  retryPolicy: '3 retries with backoff: 1 minute, 1 hour and 6 hours after the first attempt',
});

export interface LinearConfig {
  /** Webhook signing secrets (`lin_wh_…`). List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between the body's `webhookTimestamp` and now, in seconds. Default 60 (Linear's SDK). */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({
  secrets: secretsSchema,
  toleranceSec: z.number().int().positive().default(LINEAR_TOLERANCE_SEC),
});

/**
 * Linear webhooks. Verifies `Linear-Signature` over the raw body with every configured secret,
 * then (the body is signed) rejects a `webhookTimestamp` more than `toleranceSec` from now; id =
 * `Linear-Delivery`, else `webhookId:createdAt`; type = `<type>.<action>` (`Issue.create`); key =
 * `data.id`; occurredAt = `createdAt`.
 *
 * @example
 * const source = linear({ secrets: [process.env.LINEAR_WEBHOOK_SECRET!] });
 */
export function linear(config: LinearConfig): Source {
  const { secrets, toleranceSec } = parseConfig('linear config', schema, config);
  return {
    preset: { ...linearPreset, toleranceSec },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const digest = decodeDigest(requireHeader(request, 'linear-signature'), 'hex');
        const expected = secrets.map((s) => hmacDigest(s, [request.body]));
        if (!anyDigestMatches(expected, [digest]))
          throw new SignatureError('Linear-Signature does not match the body');
        const body = parseVerifiedJson(request.body, 'linear');
        const ts = body.webhookTimestamp;
        if (typeof ts !== 'number' || !Number.isFinite(ts))
          throw new SignatureError('Linear body has no webhookTimestamp');
        const skew = Math.abs(now.getTime() - ts) / 1000;
        if (skew > toleranceSec)
          throw new SignatureError(
            `timestamp is ${Math.round(skew)} s away from now (tolerance ${toleranceSec} s)`,
          );
        const type = stringField(body, 'type');
        const action = stringField(body, 'action');
        const createdAt = stringField(body, 'createdAt');
        const webhookId = stringField(body, 'webhookId');
        return [
          {
            eventId: requireEventId(
              optionalHeader(request, 'linear-delivery') ??
                (webhookId && createdAt ? `${webhookId}:${createdAt}` : undefined),
              'linear',
              'Linear-Delivery',
            ),
            type: requireType(
              type && action ? `${type}.${action}` : type,
              'linear',
              'body.type / body.action',
            ),
            key: idField(body, 'data.id'),
            occurredAt: toIso(createdAt),
          },
        ];
      },
    },
  };
}
