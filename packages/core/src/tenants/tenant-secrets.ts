import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Source, TenantRequest } from '../contracts/source.js';
import type { Verifier } from '../contracts/verifier.js';
import { SecretsLookupError, SignatureError } from '../errors.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { createTtlCache } from './secrets-cache.js';
import { type TenantFrom, tenantOf } from './tenant-of.js';

/** What a secrets lookup is asked about. */
export interface SecretsRequest {
  /** The configured source name. */
  readonly source: string;
  readonly tenant: string;
  /** The request's headers, lower-case names (unverified). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface TenantSecretsOptions {
  /**
   * The secrets valid for a tenant right now, several while rotating (any may match). Its answer
   * must depend on `source` and `tenant` only: it is kept for `ttlMs` per tenant. An empty list
   * means no secret can match (an unknown tenant): answered 401. A rejection, or no answer within
   * `lookupTimeoutMs`, is answered 503 with `Retry-After`.
   */
  secrets: (request: SecretsRequest) => Promise<readonly string[]>;
  /** Where the request names its tenant. Default `'path'` (`/webhooks/:source/:tenant`). */
  tenant?: TenantFrom | undefined;
  /**
   * How long a tenant's secrets are kept, in ms. Default 60 000. A rotated-in secret is accepted,
   * and a rotated-out one refused, at most this long after the lookup starts answering so. A
   * lookup that fails once they expired is answered 503: stale secrets are never used.
   */
  ttlMs?: number | undefined;
  /** Longest wait for one lookup, in ms. Default 2 000. */
  lookupTimeoutMs?: number | undefined;
  /** Most tenants kept at once; past it the oldest loaded is forgotten. Default 10 000. */
  maxTenants?: number | undefined;
  /** Clock in ms. Default `Date.now`. For tests. */
  now?: (() => number) | undefined;
}

const schema = z.strictObject({
  secrets: z.custom<TenantSecretsOptions['secrets']>((v) => typeof v === 'function'),
  tenant: z
    .union([
      z.literal('path'),
      z.strictObject({ header: z.string().min(1) }),
      z.strictObject({ field: z.string().min(1) }),
    ])
    .default('path'),
  ttlMs: z.number().int().positive().default(60_000),
  lookupTimeoutMs: z.number().int().positive().default(2_000),
  maxTenants: z.number().int().positive().default(10_000),
  now: z
    .custom<() => number>((v) => typeof v === 'function')
    .optional()
    .transform((f) => f ?? Date.now),
});

/** Answers every request 401: the lookup knows no secret for this tenant. */
const noSecrets = (tenant: string): Verifier => ({
  verify() {
    throw new SignatureError(`no secrets for tenant ${tenant}`);
  },
});

/**
 * A source whose secrets are looked up per tenant, for any built-in sender that takes `secrets`
 * (Stripe, GitHub, Slack, Shopify, Standard Webhooks, generic HMAC, CloudEvents tokens): `build`
 * is that sender's factory, called with each tenant's current secrets. The receiver reads the
 * tenant, awaits the secrets (kept per tenant for `ttlMs`, one lookup in flight per tenant), then
 * verifies as the sender's own verifier does, handshakes included.
 *
 * `build` is called once here with a throw-away secret, so a config mistake fails at start-up
 * and the preset (retry horizon, scheme) is known before any request.
 *
 * @example
 * const source = tenantSecrets((secrets) => stripe({ secrets }), {
 *   secrets: async ({ tenant }) => vault.stripeSecrets(tenant), // ['whsec_new', 'whsec_old'] while rotating
 * });
 * createReceiver({ sources: { stripe: source }, pathPrefix: '/webhooks', inbox, transport }); // POST /webhooks/stripe/acme
 */
export function tenantSecrets(
  build: (secrets: readonly string[]) => Source,
  options: TenantSecretsOptions,
): Source {
  const o = parseConfig('tenantSecrets options', schema, options);
  const probe = build([`whsec_${randomBytes(24).toString('base64')}`]);
  const cache = createTtlCache<Verifier>({ ttlMs: o.ttlMs, maxEntries: o.maxTenants, now: o.now });

  const load = async (request: TenantRequest, tenant: string): Promise<Verifier> => {
    const { source, headers } = request;
    let secrets: readonly string[];
    try {
      secrets = await withTimeout(o.secrets({ source, tenant, headers }), o.lookupTimeoutMs);
    } catch (err) {
      throw new SecretsLookupError(source, tenant, { cause: err });
    }
    if (secrets.length === 0) return noSecrets(tenant);
    try {
      return build(secrets).verifier;
    } catch (err) {
      throw new SecretsLookupError(source, tenant, { cause: err });
    }
  };

  return {
    preset: probe.preset,
    verifier: {
      verify() {
        throw new SignatureError('per-tenant source: verify through the receiver (verifierFor)');
      },
    },
    async verifierFor(request) {
      const tenant = tenantOf(o.tenant, request);
      const verifier = await cache.get(`${request.source}\u0000${tenant}`, () =>
        load(request, tenant),
      );
      return { verifier, tenant };
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref?.();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
