import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { BadRequestError, SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS } from './config.js';
import { decodeDigest } from './crypto.js';
import { requireEventId, requireType, unixSecondsToIso } from './event.js';
import { bodyText, isObject, stringField } from './json.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';

export const sendgridPreset: SenderPreset = Object.freeze({
  name: 'sendgrid',
  scheme:
    'ECDSA P-256 SHA-256 (verification key) over timestamp + body, base64 DER, headers X-Twilio-Email-Event-Webhook-Signature / -Timestamp',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'sg_event_id (each event of the batch)' } as const),
  retryHorizonMs: DAY_MS,
  retryPolicy: 'retries a batch for up to 24 hours while the endpoint answers other than 2xx',
});

export interface SendgridConfig {
  /** Event Webhook verification keys (base64 DER public keys from the Mail Settings page): any may match. */
  publicKeys: readonly string[];
  /**
   * Largest accepted distance between the signed timestamp and now, in seconds. Default none:
   * SendGrid documents no freshness window, and its own SDK checks none.
   */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({
  publicKeys: z.array(z.string().min(1)).min(1),
  toleranceSec: z.number().int().positive().optional(),
});

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

function publicKeyOf(base64: string): KeyObject {
  try {
    return createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new SignatureError('sendgrid: a configured public key is not a base64 DER key');
  }
}

/**
 * SendGrid Event Webhook (signed). Verifies the ECDSA signature over the timestamp header and the
 * raw body with every configured verification key; a batch (a JSON array) becomes one event per
 * element: id = `sg_event_id`, type = `event` (`delivered`, `open`, …), key = `sg_message_id`,
 * occurredAt = `timestamp`.
 *
 * @example
 * const source = sendgrid({ publicKeys: [process.env.SENDGRID_WEBHOOK_PUBLIC_KEY!] });
 */
export function sendgrid(config: SendgridConfig): Source {
  const { publicKeys, toleranceSec } = parseConfig('sendgrid config', schema, config);
  const keys = publicKeys.map(publicKeyOf);
  return {
    preset: { ...sendgridPreset, toleranceSec: toleranceSec ?? null },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const signature = decodeDigest(requireHeader(request, SIGNATURE), 'base64');
        const timestamp = requireHeader(request, TIMESTAMP);
        const data = Buffer.concat([Buffer.from(timestamp), request.body]);
        let matched = false;
        for (const key of keys)
          if (signature !== undefined && verify('sha256', data, key, signature)) matched = true;
        if (!matched) throw new SignatureError(`${SIGNATURE} does not match the body`);
        if (toleranceSec !== undefined)
          assertFresh(parseUnixSeconds(timestamp, TIMESTAMP), now, toleranceSec);
        let batch: unknown;
        try {
          batch = JSON.parse(bodyText(request.body) ?? '');
        } catch {
          batch = undefined;
        }
        if (!Array.isArray(batch) || !batch.every(isObject))
          throw new BadRequestError('sendgrid: the body is not a batch (a JSON array of events)');
        return batch.map((event) => ({
          eventId: requireEventId(stringField(event, 'sg_event_id'), 'sendgrid', 'sg_event_id'),
          type: requireType(stringField(event, 'event'), 'sendgrid', 'event'),
          key: stringField(event, 'sg_message_id'),
          occurredAt: unixSecondsToIso(event.timestamp),
          payload: new TextEncoder().encode(JSON.stringify(event)),
        }));
      },
    },
  };
}
