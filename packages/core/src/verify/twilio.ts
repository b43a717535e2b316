import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { HOUR_MS, secretsSchema } from './config.js';
import { anyDigestMatches, decodeDigest, hmacDigest, secretEquals, sha256Hex } from './crypto.js';
import { requireEventId } from './event.js';
import { bodyText, stringField, tryParseJson } from './json.js';
import { optionalHeader, requireHeader } from './request.js';

export const twilioPreset: SenderPreset = Object.freeze({
  name: 'twilio',
  scheme:
    'HMAC-SHA1(auth token, URL + form params sorted by name, or URL with bodySHA256 for a JSON body), base64, header X-Twilio-Signature',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'header', field: 'I-Twilio-Idempotency-Token' } as const),
  retryHorizonMs: HOUR_MS,
  retryPolicy:
    'retries only where the webhook URL asks for it (connection overrides #rc, at most 5 retries, each within its 15 s timeout): minutes',
});

export interface TwilioConfig {
  /** Auth tokens of the account (primary and secondary while rotating): any may match. */
  secrets: readonly string[];
  /**
   * The scheme, host and port Twilio called, when the receiver sits behind a proxy that changes
   * them (`https://hooks.example.com`): Twilio signs the URL it requested, path and query
   * included. Default: the request's own URL.
   */
  publicOrigin?: string | undefined;
}

const schema = z.strictObject({
  secrets: secretsSchema,
  publicOrigin: z.url().optional(),
});

/** The URL as Twilio requested it. */
function signedUrl(request: IncomingWebhook, publicOrigin: string | undefined): string {
  if (publicOrigin === undefined) return request.url.href;
  const origin = new URL(publicOrigin);
  return `${origin.origin}${request.url.pathname}${request.url.search}`;
}

/** Form params as Twilio signs them: by name, then value, each name followed by its value. */
function signedParams(form: URLSearchParams): string {
  const pairs = [...form].sort(([a, x], [b, y]) => (a === b ? cmp(x, y) : cmp(a, b)));
  return pairs.map(([name, value]) => name + value).join('');
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Twilio webhooks (Messaging and Voice status callbacks and incoming requests, form-encoded; JSON
 * bodies signed through the `bodySHA256` query parameter). Verifies `X-Twilio-Signature` with
 * every configured auth token; id = `I-Twilio-Idempotency-Token` (the same on every retry of one
 * request), else `<MessageSid|CallSid>:<status>`; type = `message.<MessageStatus|SmsStatus>`,
 * `call.<CallStatus>`, a JSON body's `type`, else `webhook`; key = the MessageSid or CallSid.
 *
 * Limit: the signature covers no timestamp, so a captured request can be replayed; the inbox's
 * id dedupe stops a replay within its retention.
 *
 * @example
 * const source = twilio({ secrets: [process.env.TWILIO_AUTH_TOKEN!], publicOrigin: 'https://hooks.example.com' });
 */
export function twilio(config: TwilioConfig): Source {
  const { secrets, publicOrigin } = parseConfig('twilio config', schema, config);
  return {
    preset: twilioPreset,
    verifier: {
      verify(request: IncomingWebhook): readonly VerifiedEvent[] {
        const digest = decodeDigest(requireHeader(request, 'x-twilio-signature'), 'base64');
        const url = signedUrl(request, publicOrigin);
        const bodyHash = request.url.searchParams.get('bodySHA256');
        let form: URLSearchParams | undefined;
        let signed: string;
        if (bodyHash !== null) {
          if (!secretEquals(bodyHash.toLowerCase(), sha256Hex(request.body)))
            throw new SignatureError('bodySHA256 does not match the body');
          signed = url;
        } else {
          form = new URLSearchParams(bodyText(request.body) ?? '');
          signed = url + signedParams(form);
        }
        const expected = secrets.map((s) => hmacDigest(s, [signed], 'sha1'));
        if (!anyDigestMatches(expected, [digest]))
          throw new SignatureError('X-Twilio-Signature does not match the URL and body');
        const json = form === undefined ? tryParseJson(request.body) : undefined;
        const param = (name: string) => form?.get(name) ?? undefined;
        const sid = param('MessageSid') ?? param('SmsSid') ?? param('CallSid');
        const messageStatus = param('MessageStatus') ?? param('SmsStatus');
        const callStatus = param('CallStatus');
        const type =
          messageStatus !== undefined
            ? `message.${messageStatus}`
            : callStatus !== undefined
              ? `call.${callStatus}`
              : (stringField(json, 'type') ?? 'webhook');
        const fallbackId =
          sid === undefined ? stringField(json, 'id') : `${sid}:${messageStatus ?? callStatus}`;
        return [
          {
            eventId: requireEventId(
              optionalHeader(request, 'i-twilio-idempotency-token') ?? fallbackId,
              'twilio',
              'I-Twilio-Idempotency-Token',
            ),
            type,
            key: sid,
          },
        ];
      },
    },
  };
}
