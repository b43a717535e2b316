import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { DAY_MS, DEFAULT_TOLERANCE_SEC, toleranceSchema } from './config.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { requireType, toIso } from './event.js';
import { parseVerifiedJson, stringField } from './json.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';

export const standardWebhooksPreset: SenderPreset = Object.freeze({
  name: 'standard-webhooks',
  scheme:
    'HMAC-SHA256(base64-decoded whsec_ secret, webhook-id + "." + webhook-timestamp + "." + body), base64, header webhook-signature: v1,… (space-separated); Svix\'s svix-id/-timestamp/-signature names too',
  toleranceSec: DEFAULT_TOLERANCE_SEC,
  eventId: Object.freeze({ from: 'header', field: 'webhook-id (or svix-id)' } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy:
    'set by each sender; about 3 days assumed (Svix: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)',
});

export interface StandardWebhooksConfig {
  /** Signing secrets, `whsec_<base64>` (the prefix may be left out). List several while rotating: any may match. */
  secrets: readonly string[];
  /** Largest accepted distance between webhook-timestamp and now, either way, in seconds. Default 300. */
  toleranceSec?: number | undefined;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `whsec_<base64>` → the HMAC key bytes. */
const secretSchema = z
  .string()
  .transform((s) => (s.startsWith('whsec_') ? s.slice('whsec_'.length) : s))
  .refine((b64) => b64.length > 0 && BASE64.test(b64), 'a secret is not whsec_<base64>')
  .transform((b64) => Buffer.from(b64, 'base64'));

const schema = z.strictObject({
  secrets: z.array(secretSchema).min(1, 'at least one secret (list several while rotating)'),
  toleranceSec: toleranceSchema,
});

/**
 * The header names a delivery uses: `webhook-*` (the Standard Webhooks spec) or `svix-*` (Svix's
 * default). One set per request, as Svix's own libraries read it: `webhook-*` when `webhook-id` is
 * present, else `svix-*` when `svix-id` is, else `webhook-*` (so the 401 names the spec's header).
 */
function headerNames(request: IncomingWebhook): {
  id: string;
  timestamp: string;
  signature: string;
} {
  const prefix =
    request.headers['webhook-id'] === undefined && request.headers['svix-id'] !== undefined
      ? 'svix'
      : 'webhook';
  return { id: `${prefix}-id`, timestamp: `${prefix}-timestamp`, signature: `${prefix}-signature` };
}

/** `v1,<b64> v1,<b64> v1a,<…>` → every v1 signature, decoded (other versions ignored). */
function v1Signatures(header: string): (Buffer | undefined)[] {
  return header
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => decodeDigest(entry.slice(3), 'base64'));
}

/**
 * Any Standard Webhooks sender (Svix and others). Verifies `webhook-signature` (v1 entries, any
 * may match) over `webhook-id.webhook-timestamp.body` with every configured secret and rejects a
 * timestamp more than `toleranceSec` away (either way); id = `webhook-id` (signed, so a replay
 * cannot change it), type = `type`, occurredAt = `timestamp`. Svix's default header names
 * (`svix-id`, `svix-timestamp`, `svix-signature`) are read the same way when `webhook-id` is absent.
 *
 * @example
 * const source = standardWebhooks({ secrets: [process.env.WEBHOOK_SECRET!] }); // whsec_…
 * const [event] = source.verifier.verify(request, new Date()); // event.eventId === 'msg_…'
 */
export function standardWebhooks(config: StandardWebhooksConfig): Source {
  const { secrets, toleranceSec } = parseConfig('standard-webhooks config', schema, config);
  return {
    preset: { ...standardWebhooksPreset, toleranceSec },
    verifier: {
      verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
        const names = headerNames(request);
        const id = requireHeader(request, names.id);
        const timestamp = requireHeader(request, names.timestamp);
        const received = v1Signatures(requireHeader(request, names.signature));
        const expected = secrets.map((key) =>
          hmacDigest(key, [`${id}.${timestamp}.`, request.body]),
        );
        if (!anyDigestMatches(expected, received)) {
          throw new SignatureError(`no ${names.signature} v1 matches the body`);
        }
        assertFresh(parseUnixSeconds(timestamp, names.timestamp), now, toleranceSec);
        const body = parseVerifiedJson(request.body, 'standard-webhooks');
        return [
          {
            eventId: id,
            type: requireType(stringField(body, 'type'), 'standard-webhooks', 'body.type'),
            occurredAt: toIso(body.timestamp),
          },
        ];
      },
    },
  };
}
