import type { HandshakeResponse, IncomingWebhook } from '../contracts/verifier.js';

/**
 * The CloudEvents webhook abuse-protection handshake (Webhook spec 1.0, section 4): an OPTIONS
 * request with `WebHook-Request-Origin` is answered 200 with `WebHook-Allowed-Origin` (the origin
 * asked for, when `allowedOrigins` is unset or lists it), `WebHook-Allowed-Rate` when a rate was
 * asked (`allowedRate`, default `*`) and `Allow: POST`; an origin not listed gets 403 and no
 * permission. Undefined for any other request: the delivery path decides.
 */
export function answerHandshake(
  request: IncomingWebhook,
  options: {
    readonly allowedOrigins?: readonly string[] | undefined;
    readonly allowedRate?: string;
  },
): HandshakeResponse | undefined {
  if (request.method !== 'OPTIONS') return undefined;
  const origin = request.headers['webhook-request-origin'];
  if (origin === undefined) return undefined;
  const { allowedOrigins } = options;
  const allowed =
    allowedOrigins === undefined ||
    allowedOrigins.includes('*') ||
    allowedOrigins.some((o) => o.toLowerCase() === origin.toLowerCase());
  if (!allowed) return { status: 403, headers: {}, body: '' };
  const headers: Record<string, string> = { allow: 'POST', 'webhook-allowed-origin': origin };
  if (request.headers['webhook-request-rate'] !== undefined) {
    headers['webhook-allowed-rate'] = options.allowedRate ?? '*';
  }
  return { status: 200, headers, body: '' };
}
