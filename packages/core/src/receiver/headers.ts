/**
 * Request headers carried on the envelope: the content type, W3C trace context, and the senders'
 * delivery/attempt metadata a handler or an operator may want (which delivery, which retry, which
 * topic). Signatures, secrets and auth headers are never kept: they would travel through the broker
 * and end up in dead-letter listings.
 */
export const KEPT_HEADERS: readonly string[] = [
  'content-type',
  'traceparent',
  'tracestate',
  'baggage',
  // GitHub
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  // Slack
  'x-slack-retry-num',
  'x-slack-retry-reason',
  // Shopify
  'x-shopify-topic',
  'x-shopify-webhook-id',
  'x-shopify-event-id',
  'x-shopify-triggered-at',
  'x-shopify-shop-domain',
  // Standard Webhooks (Svix, …)
  'webhook-id',
  'webhook-timestamp',
  'svix-id',
  'svix-timestamp',
  // Azure Event Grid
  'aeg-event-type',
  'aeg-delivery-count',
  'aeg-subscription-name',
];

/**
 * The envelope header carrying the tenant a request named (`/webhooks/:source/:tenant`, or where
 * a `tenantSecrets` source reads it). Set by the receiver only, never kept from a request.
 */
export const TENANT_HEADER = 'onceflow-tenant';

const SIGNATURE_HEADER = /signature|hmac|authorization|secret|token|cookie|client-?state/;

/** True for names that may carry a credential; such headers are never kept. */
export function isSignatureHeader(name: string): boolean {
  return SIGNATURE_HEADER.test(name.toLowerCase());
}

/**
 * Builds the picker for the envelope's headers: a fixed list looked up by name, so its cost does
 * not grow with the number of request headers.
 */
export function headerPicker(
  extra: readonly string[],
): (headers: Readonly<Record<string, string>>) => Record<string, string> {
  const names = [...new Set([...KEPT_HEADERS, ...extra.map((h) => h.toLowerCase())])].filter(
    (h) => !isSignatureHeader(h),
  );
  return (headers) => {
    const kept: Record<string, string> = {};
    for (const name of names) {
      const value = headers[name];
      if (value !== undefined) kept[name] = value;
    }
    return kept;
  };
}
