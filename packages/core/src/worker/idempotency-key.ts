import { createHash } from 'node:crypto';

const PREFIX = 'onceflow-';

/**
 * A key for one downstream action on one event, the same on every delivery of that event on every
 * worker: `onceflow-` + the sha-256 (hex) of (source, event id, action). 73 characters of
 * `[a-z0-9-]`, so it fits Stripe's `Idempotency-Key` (≤ 255) and most other APIs' limits.
 * Distinct actions give distinct keys; the parts are length-delimited, so no two different
 * (source, id, action) triples share a key.
 *
 * @example
 * const key = deriveIdempotencyKey({ source: 'stripe', id: 'evt_1' }, 'refund'); // 'onceflow-3f…'
 */
export function deriveIdempotencyKey(
  event: { readonly source: string; readonly id: string },
  action: string,
): string {
  if (typeof action !== 'string' || action.length === 0) {
    throw new TypeError('idempotencyKey(action): action must be a non-empty string');
  }
  const digest = createHash('sha256')
    .update(JSON.stringify(['onceflow.idempotency.v1', event.source, event.id, action]))
    .digest('hex');
  return PREFIX + digest;
}
