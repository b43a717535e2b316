import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, toIso } from './event.js';
import { field, parseVerifiedJson, stringField } from './json.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';
import { signatureParams } from './signature-params.js';

/** Paddle's own SDK accepts a `ts` at most 5 s old. */
const PADDLE_TOLERANCE_SEC = 5;

export const paddlePreset: SenderPreset = Object.freeze({
  name: 'paddle',
  scheme:
    'HMAC-SHA256(endpoint secret key, ts + ":" + body), hex, header Paddle-Signature: ts=…;h1=… (any h1 may match)',
  toleranceSec: PADDLE_TOLERANCE_SEC,
  eventId: Object.freeze({ from: 'body', field: 'event_id' } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy: 'live: up to 60 times over 3 days with backoff; sandbox: 3 times within 15 minutes',
});

export interface PaddleConfig {
  /** Notification destinations' secret keys (`pdl_ntfset_…`). List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between the signed `ts` and now, in seconds. Default 5 (Paddle's SDK). */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({
  secrets: secretsSchema,
  toleranceSec: z.number().int().positive().default(PADDLE_TOLERANCE_SEC),
});

/**
 * Paddle Billing webhooks (notifications). Verifies `Paddle-Signature` over `ts:body` with every
 * configured secret key and rejects a `ts` more than `toleranceSec` from now; id = `event_id`,
 * type = `event_type`, occurredAt = `occurred_at`, key = `data.customer_id`, else `data.id`.
 *
 * @example
 * const source = paddle({ secrets: [process.env.PADDLE_WEBHOOK_SECRET!] });
 */
export function paddle(config: PaddleConfig): Source {
  const { secrets, toleranceSec } = parseConfig('paddle config', schema, config);
  return {
    preset: { ...paddlePreset, toleranceSec },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const params = signatureParams(requireHeader(request, 'paddle-signature'), ';');
        const ts = params.get('ts');
        if (ts?.length !== 1 || ts[0] === undefined)
          throw new SignatureError('Paddle-Signature needs one ts=');
        const t = parseUnixSeconds(ts[0], 'Paddle-Signature ts');
        const received = (params.get('h1') ?? []).map((h) => decodeDigest(h, 'hex'));
        const expected = secrets.map((s) => hmacDigest(s, [`${t}:`, request.body]));
        if (!anyDigestMatches(expected, received))
          throw new SignatureError('no Paddle-Signature h1 matches the body');
        assertFresh(t, now, toleranceSec);
        const body = parseVerifiedJson(request.body, 'paddle');
        const data = field(body, 'data');
        return [
          {
            eventId: requireEventId(stringField(body, 'event_id'), 'paddle', 'body.event_id'),
            type: requireType(stringField(body, 'event_type'), 'paddle', 'body.event_type'),
            key: stringField(data, 'customer_id') ?? stringField(data, 'id'),
            occurredAt: toIso(stringField(body, 'occurred_at')),
          },
        ];
      },
    },
  };
}
