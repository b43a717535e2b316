import { createVerify, X509Certificate } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { SenderPreset, Source } from '../contracts/source.js';
import type { IncomingWebhook, VerifiedEvent, Verifier } from '../contracts/verifier.js';
import { SecretsLookupError, SignatureError } from '../errors.js';
import { createTtlCache } from '../tenants/secrets-cache.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { DAY_MS, HOUR_MS } from './config.js';
import { requireEventId, requireType, toIso } from './event.js';
import { parseVerifiedJson, stringField } from './json.js';
import { requireHeader } from './request.js';

export const paypalPreset: SenderPreset = Object.freeze({
  name: 'paypal',
  scheme:
    'SHA256withRSA over transmission id | transmission time | webhook id | CRC32 of the body, with the certificate at PAYPAL-CERT-URL (a paypal.com HTTPS URL), header PAYPAL-TRANSMISSION-SIG',
  toleranceSec: null,
  eventId: Object.freeze({ from: 'body', field: 'id' } as const),
  retryHorizonMs: 3 * DAY_MS,
  retryPolicy: 'up to 25 times over 3 days while the endpoint answers other than 2xx',
});

export interface PaypalConfig {
  /** The webhook ids (developer dashboard) this endpoint receives for: the signature covers one. */
  webhookIds: readonly string[];
  /**
   * Loads the PEM certificate PayPal names in `PAYPAL-CERT-URL` (already checked to be an HTTPS
   * URL on paypal.com). Default: `fetch` over HTTPS, a network call per certificate not cached.
   * A rejection answers 503 with `Retry-After` (PayPal retries), never 401.
   */
  fetchCertificate?: ((url: string) => Promise<string>) | undefined;
  /** How long a loaded certificate is kept, in ms. Default 24 hours. */
  certificateTtlMs?: number | undefined;
}

const schema = z.strictObject({
  webhookIds: z.array(z.string().min(1)).min(1),
  fetchCertificate: z
    .custom<(url: string) => Promise<string>>((f) => typeof f === 'function')
    .optional(),
  certificateTtlMs: z
    .number()
    .int()
    .positive()
    .default(24 * HOUR_MS),
});

async function fetchOverHttps(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return res.text();
}

/** The certificate URL, when it is HTTPS on paypal.com (else the request is forged). */
function certificateUrl(request: IncomingWebhook): string {
  const raw = requireHeader(request, 'paypal-cert-url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SignatureError('PAYPAL-CERT-URL is not a URL');
  }
  const host = url.hostname.toLowerCase();
  if (url.protocol !== 'https:' || !(host === 'paypal.com' || host.endsWith('.paypal.com')))
    throw new SignatureError('PAYPAL-CERT-URL is not an HTTPS URL on paypal.com');
  return url.href;
}

/** Throws `SignatureError` unless the request is signed with `cert` for one of `webhookIds`. */
function assertSigned(
  request: IncomingWebhook,
  now: Date,
  cert: X509Certificate,
  webhookIds: readonly string[],
): void {
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo))
    throw new SignatureError('the PAYPAL-CERT-URL certificate is not valid now');
  const algorithm = requireHeader(request, 'paypal-auth-algo');
  if (algorithm !== 'SHA256withRSA')
    throw new SignatureError(`PAYPAL-AUTH-ALGO ${algorithm} is not SHA256withRSA`);
  const id = requireHeader(request, 'paypal-transmission-id');
  const time = requireHeader(request, 'paypal-transmission-time');
  const signature = Buffer.from(requireHeader(request, 'paypal-transmission-sig'), 'base64');
  const crc = crc32(request.body);
  let matched = false;
  for (const webhookId of webhookIds) {
    const check = createVerify('RSA-SHA256');
    check.update(`${id}|${time}|${webhookId}|${crc}`);
    if (check.verify(cert.publicKey, signature)) matched = true;
  }
  if (!matched) throw new SignatureError('PAYPAL-TRANSMISSION-SIG does not match the body');
}

/**
 * PayPal webhooks (REST, "verify on your own"). Checks that `PAYPAL-CERT-URL` is an HTTPS URL on
 * paypal.com, loads that certificate (cached for `certificateTtlMs`; `fetchCertificate` makes the
 * load yours), checks its validity dates, then the RSA signature over transmission id, time, one
 * of `webhookIds` and the CRC32 of the raw body; id = `id` (`WH-…`), type = `event_type`, key =
 * `resource.id`, occurredAt = `create_time`.
 *
 * Limits: the certificate's chain to PayPal's CA is not walked (its URL on paypal.com over HTTPS
 * is what vouches for it); the signed transmission time is not checked against a tolerance
 * (PayPal's own SDKs check none).
 *
 * @example
 * const source = paypal({ webhookIds: [process.env.PAYPAL_WEBHOOK_ID!] });
 */
export function paypal(config: PaypalConfig): Source {
  const c = parseConfig('paypal config', schema, config);
  const load = c.fetchCertificate ?? fetchOverHttps;
  const certificates = createTtlCache<X509Certificate>({
    ttlMs: c.certificateTtlMs,
    maxEntries: 32,
    now: Date.now,
  });
  const verifierWith = (cert: X509Certificate): Verifier => ({
    verify(request: IncomingWebhook, now: Date): readonly VerifiedEvent[] {
      assertSigned(request, now, cert, c.webhookIds);
      const body = parseVerifiedJson(request.body, 'paypal');
      return [
        {
          eventId: requireEventId(stringField(body, 'id'), 'paypal', 'body.id'),
          type: requireType(stringField(body, 'event_type'), 'paypal', 'body.event_type'),
          key: stringField(body, 'resource.id'),
          occurredAt: toIso(stringField(body, 'create_time')),
        },
      ];
    },
  });
  const refuse = (err: unknown): Verifier => ({
    verify() {
      throw err;
    },
  });
  return {
    preset: paypalPreset,
    verifier: refuse(new SignatureError('paypal: the certificate is loaded per request')),
    async verifierFor(request) {
      let url: string;
      try {
        url = certificateUrl(request);
      } catch (err) {
        return { verifier: refuse(err) };
      }
      try {
        const cert = await certificates.get(url, async () => new X509Certificate(await load(url)));
        return { verifier: verifierWith(cert) };
      } catch (err) {
        throw new SecretsLookupError(request.source, undefined, { cause: err });
      }
    },
  };
}
