import { UsageError } from '../errors.js';
import { keepsEnvelopes } from './store.js';

/**
 * Claim-check mode of a receiver: `always` puts only the event's reference on the broker,
 * `oversize` only for envelopes whose wire encoding is over the transport's
 * `capabilities.maxMessageBytes`, `false` (the default) never.
 */
export type ClaimCheckMode = 'always' | 'oversize' | false;

/**
 * Refuses claim-check over a store that cannot serve it, at start rather than at the first
 * delivery. Throws `UsageError`.
 */
export function assertClaimCheckStore(what: string, store: unknown): void {
  if (keepsEnvelopes(store)) return;
  throw new UsageError(
    `${what}: claimCheck needs a store that keeps claimed envelopes until the event completes ` +
      '(the embedded or the PostgreSQL store); this store does not (the Redis and memory stores ' +
      'drop the envelope once it is enqueued)',
  );
}
