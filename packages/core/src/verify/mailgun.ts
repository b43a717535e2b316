import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { HOUR_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, unixSecondsToIso } from './event.js';
import { field, parseVerifiedJson, stringField } from './json.js';
import { assertFresh, parseUnixSeconds } from './request.js';

export const mailgunPreset: SenderPreset = Object.freeze({
  name: 'mailgun',
  scheme:
    'HMAC-SHA256(webhook signing key, signature.timestamp + signature.token), hex, in the body as signature.signature',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'event-data.id' } as const),
  retryHorizonMs: 8 * HOUR_MS,
  retryPolicy: 'retries over 8 hours (10 min, 10 min, 15 min, 30 min, 1 h, 2 h, 4 h)',
});

export interface MailgunConfig {
  /** HTTP webhook signing keys (Sending → Webhooks). List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between `signature.timestamp` and now, in seconds. Default none. */
  toleranceSec?: number | undefined;
}

const schema = z.strictObject({
  secrets: secretsSchema,
  toleranceSec: z.number().int().positive().optional(),
});

/**
 * Mailgun webhooks (JSON). The signature is in the body, over `timestamp + token`, not over the
 * event: the body is parsed to read it (so a body that is not JSON is refused as unsigned), and
 * the event is taken from that same verified parse. id = `event-data.id`, type = `event-data.event`,
 * key = the message's `message-id`, occurredAt = `event-data.timestamp`.
 *
 * Limit: the event data is not covered by the signature; a party that captured one signed
 * request can attach other event data to its timestamp and token. Mailgun's advice is to keep
 * each token once (the inbox's event-id dedupe does not) and to check the timestamp
 * (`toleranceSec`).
 *
 * @example
 * const source = mailgun({ secrets: [process.env.MAILGUN_WEBHOOK_SIGNING_KEY!], toleranceSec: 600 });
 */
export function mailgun(config: MailgunConfig): Source {
  const { secrets, toleranceSec } = parseConfig('mailgun config', schema, config);
  return {
    preset: { ...mailgunPreset, toleranceSec: toleranceSec ?? null },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        let body: Record<string, unknown>;
        try {
          body = parseVerifiedJson(request.body, 'mailgun');
        } catch {
          throw new SignatureError('mailgun: the body carries no signature');
        }
        const timestamp = stringField(body, 'signature.timestamp');
        const token = stringField(body, 'signature.token');
        const signature = stringField(body, 'signature.signature');
        if (timestamp === undefined || token === undefined || signature === undefined)
          throw new SignatureError('mailgun: signature.timestamp, token and signature are needed');
        const expected = secrets.map((s) => hmacDigest(s, [timestamp, token]));
        if (!anyDigestMatches(expected, [decodeDigest(signature, 'hex')]))
          throw new SignatureError('mailgun: signature.signature does not match');
        if (toleranceSec !== undefined)
          assertFresh(parseUnixSeconds(timestamp, 'signature.timestamp'), now, toleranceSec);
        const event = field(body, 'event-data');
        return [
          {
            eventId: requireEventId(stringField(event, 'id'), 'mailgun', 'event-data.id'),
            type: requireType(stringField(event, 'event'), 'mailgun', 'event-data.event'),
            key: stringField(field(field(event, 'message'), 'headers'), 'message-id'),
            occurredAt: unixSecondsToIso(
              typeof field(event, 'timestamp') === 'number'
                ? Math.floor(field(event, 'timestamp') as number)
                : undefined,
            ),
          },
        ];
      },
    },
  };
}
