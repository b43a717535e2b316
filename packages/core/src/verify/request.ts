import type { IncomingWebhook } from '../contracts/verifier.js';
import { SignatureError } from '../errors.js';

/** A header's value, or undefined when absent or empty. Names are lower-case. */
export function optionalHeader(request: IncomingWebhook, name: string): string | undefined {
  const value = request.headers[name];
  return value === undefined || value === '' ? undefined : value;
}

/** A header the signature check needs: `SignatureError` (401) when it is absent or empty. */
export function requireHeader(request: IncomingWebhook, name: string): string {
  const value = optionalHeader(request, name);
  if (value === undefined) throw new SignatureError(`missing ${name} header`);
  return value;
}

/** Unix seconds as senders write them (digits only). `SignatureError` on anything else. */
export function parseUnixSeconds(value: string, what: string): number {
  if (!/^\d{1,12}$/.test(value)) throw new SignatureError(`${what} is not a unix timestamp`);
  return Number(value);
}

/**
 * Rejects a signed timestamp further than `toleranceSec` from `now` in either direction: too old
 * is a replay, too far ahead is a clock problem or a forged future replay window.
 */
export function assertFresh(timestampSec: number, now: Date, toleranceSec: number): void {
  const skew = Math.abs(Math.floor(now.getTime() / 1000) - timestampSec);
  if (skew > toleranceSec) {
    throw new SignatureError(`timestamp is ${skew} s away from now (tolerance ${toleranceSec} s)`);
  }
}
