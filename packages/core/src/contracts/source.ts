import type { IncomingWebhook, Verifier } from './verifier.js';

/**
 * What onceflow knows about a sender, as data: enough to review a configuration without
 * reading code, and to check the inbox retention against the sender's retry horizon.
 */
export interface SenderPreset {
  /** The sender: a key of `presets` (`stripe`, `github`, `twilio`, `event-grid`, …), or `cloudevents`. */
  readonly name: string;
  /** The signature scheme in one line, e.g. `HMAC-SHA256(secret, t + "." + body), hex, header Stripe-Signature v1`. */
  readonly scheme: string;
  /** Largest accepted clock skew for a signed timestamp, in seconds; null when the scheme has no timestamp. */
  readonly toleranceSec: number | null;
  /** Where the event id lives. */
  readonly eventId: { readonly from: 'header' | 'body'; readonly field: string };
  /** A handshake the receiver must answer (Graph's validationToken, Slack's url_verification). */
  readonly handshake?: string | undefined;
  /**
   * HTTP methods besides POST that the sender's handshake uses, upper-case (e.g. `['GET']` for a
   * CRC challenge). The receiver hands such a request to `verifier.handshake` only and answers 405
   * when that returns undefined. None by default: every built-in sender, Graph's `validationToken`
   * and Slack's `url_verification` included, sends its handshake as a POST.
   */
  readonly handshakeMethods?: readonly string[] | undefined;
  /** How long the sender keeps redelivering one event, in ms. The inbox must remember ids longer. */
  readonly retryHorizonMs: number;
  /** One line on how the sender retries, for docs and start-up messages. */
  readonly retryPolicy: string;
}

/** A request as a per-tenant source sees it before verification: which source, which tenant. */
export interface TenantRequest extends IncomingWebhook {
  /** The configured source name the request came in on. */
  readonly source: string;
  /** The tenant path segment (`/webhooks/:source/:tenant`), if the path had one. */
  readonly pathTenant: string | undefined;
}

/** A configured sender: its preset and a verifier holding the secrets. */
export interface Source {
  readonly preset: SenderPreset;
  readonly verifier: Verifier;
  /**
   * Set by sources whose secrets depend on the request (`tenantSecrets`): the receiver awaits
   * it once the body is read and uses the verifier it resolves, handshake included, instead of
   * `verifier`; the tenant it names goes onto the envelope (header `onceflow-tenant`). Rejects with `SecretsLookupError` (→ 503 with `Retry-After`) when the secrets
   * cannot be had, or `BadRequestError` (→ 400) when the request names no tenant. A source whose
   * verifier needs a load that is not per tenant (PayPal's certificate) leaves `tenant` out.
   */
  readonly verifierFor?:
    | ((
        request: TenantRequest,
      ) => Promise<{ readonly verifier: Verifier; readonly tenant?: string | undefined }>)
    | undefined;
}
