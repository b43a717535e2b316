import { DEFAULT_REDACT } from './logger.js';

/** What a masked header's value reads as (the logger's censor): in the CLI and the console. */
export const MASKED = '[redacted]';

/** The header names core's logger always redacts (`headers.authorization`, `headers["x-signature"]`). */
const REDACTED = new Set(
  DEFAULT_REDACT.flatMap((path) => {
    const m = /^headers(?:\.([\w-]+)|\["([^"]+)"\])$/.exec(path);
    const name = m?.[1] ?? m?.[2];
    return name ? [name.toLowerCase()] : [];
  }),
);

/**
 * True for a header that carries a secret or a signature: whatever the logger redacts, plus
 * `authorization`, `proxy-authorization`, `cookie`, any `*-signature` or `*-signature-*`, and
 * any `*-hmac-*`. A signature is not a secret, but it is proof a holder of the secret signed
 * these bytes; operators have no use for it in a terminal or a ticket.
 */
export function isSecretHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    REDACTED.has(n) ||
    n === 'authorization' ||
    n === 'proxy-authorization' ||
    n === 'cookie' ||
    /(^|-)signature($|-)/.test(n) ||
    /(^|-)hmac($|-)/.test(n)
  );
}

/** The headers with every secret or signature header's value replaced by `[redacted]`. */
export function maskHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, isSecretHeader(k) ? MASKED : v]),
  );
}
