/**
 * A store that can serve claim-check mode: its `get(source, id)` returns the envelope the
 * receiver claimed, whatever the record's state, until retention purges the record. The embedded
 * (SQLite) and PostgreSQL stores are; the Redis store is not (it keeps the envelope only while the
 * claim is pending), nor is the memory store.
 */
export interface ClaimCheckStore {
  readonly keepsEnvelopes: true;
}

/** Whether `store` declares that it keeps claimed envelopes (`ClaimCheckStore`). */
export function keepsEnvelopes(store: unknown): store is ClaimCheckStore {
  return (
    typeof store === 'object' &&
    store !== null &&
    (store as Partial<ClaimCheckStore>).keepsEnvelopes === true
  );
}
