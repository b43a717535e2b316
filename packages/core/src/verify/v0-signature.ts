import type { IncomingWebhook } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';
import { anyDigestMatches, decodeDigest, hmacDigest } from './crypto.js';
import { assertFresh, parseUnixSeconds, requireHeader } from './request.js';

/** Where a sender of the `v0` scheme puts its signature and its timestamp (lower-case names). */
export interface V0Headers {
  readonly signature: string;
  readonly timestamp: string;
}

const PREFIX = 'v0=';

/**
 * The `v0` scheme Slack and Zoom share: `v0=` + hex HMAC-SHA256(secret, `v0:<timestamp>:<body>`).
 * Throws `SignatureError` unless a configured secret matches and the timestamp (unix seconds) is
 * within `toleranceSec` of `now`.
 */
export function assertV0Signature(
  request: IncomingWebhook,
  now: Date,
  secrets: readonly string[],
  toleranceSec: number,
  headers: V0Headers,
): void {
  const header = requireHeader(request, headers.signature);
  const timestamp = requireHeader(request, headers.timestamp);
  const digest = header.startsWith(PREFIX)
    ? decodeDigest(header.slice(PREFIX.length), 'hex')
    : undefined;
  const expected = secrets.map((s) => hmacDigest(s, [`v0:${timestamp}:`, request.body]));
  if (!anyDigestMatches(expected, [digest])) {
    throw new SignatureError(`${headers.signature} does not match the body`);
  }
  assertFresh(parseUnixSeconds(timestamp, headers.timestamp), now, toleranceSec);
}
