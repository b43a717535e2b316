import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { HOUR_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireEventId, requireType, unixSecondsToIso } from './event.js';
import { idField, parseVerifiedJson, stringField } from './json.js';
import { requireHeader } from './request.js';

export const intercomPreset: SenderPreset = Object.freeze({
  name: 'intercom',
  scheme: 'HMAC-SHA1(app client secret, body), hex, header X-Hub-Signature: sha1=…',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'id' } as const),
  retryHorizonMs: HOUR_MS,
  retryPolicy:
    'one retry about a minute after a failed or slow (over 5 s) delivery; 1 h kept as a margin',
});

export interface IntercomConfig {
  /** The app's client secrets. List several while rotating: any may match. */
  secrets: readonly string[];
}

const schema = z.strictObject({ secrets: secretsSchema });
const PREFIX = 'sha1=';

/**
 * Intercom webhooks (topics). Verifies `X-Hub-Signature` (`sha1=` + hex HMAC-SHA1 over the raw
 * body) with every configured client secret; id = `id` (`notif_…`), type = `topic`, key =
 * `data.item.id`, occurredAt = `created_at`.
 *
 * Limit: the signature covers no timestamp, so a captured request can be replayed; the inbox's
 * id dedupe stops a replay within its retention.
 *
 * @example
 * const source = intercom({ secrets: [process.env.INTERCOM_CLIENT_SECRET!] });
 */
export function intercom(config: IntercomConfig): Source {
  const { secrets } = parseConfig('intercom config', schema, config);
  return {
    preset: intercomPreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const header = requireHeader(request, 'x-hub-signature');
        const digest = header.startsWith(PREFIX)
          ? decodeDigest(header.slice(PREFIX.length), 'hex')
          : undefined;
        const expected = secrets.map((s) => hmacDigest(s, [request.body], 'sha1'));
        if (!anyDigestMatches(expected, [digest]))
          throw new SignatureError('X-Hub-Signature does not match the body');
        const body = parseVerifiedJson(request.body, 'intercom');
        return [
          {
            eventId: requireEventId(stringField(body, 'id'), 'intercom', 'body.id'),
            type: requireType(stringField(body, 'topic'), 'intercom', 'body.topic'),
            key: idField(body, 'data.item.id'),
            occurredAt: unixSecondsToIso(body.created_at),
          },
        ];
      },
    },
  };
}
