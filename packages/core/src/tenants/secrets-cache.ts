/**
 * Per-key values loaded on demand and kept for `ttlMs`: one load in flight per key (concurrent
 * requests for a tenant share it), failures not kept (the next request loads again). Touched from
 * one thread only. Holds at most `maxEntries` keys; past that the oldest loaded is forgotten.
 */
export interface TtlCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
}

export function createTtlCache<V>(options: {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly now: () => number;
}): TtlCache<V> {
  const { ttlMs, maxEntries, now } = options;
  const fresh = new Map<string, { value: V; expiresAt: number }>();
  const loading = new Map<string, Promise<V>>();
  return {
    get(key, load) {
      const hit = fresh.get(key);
      if (hit !== undefined && hit.expiresAt > now()) return Promise.resolve(hit.value);
      const pending = loading.get(key);
      if (pending !== undefined) return pending;
      const started = load().then(
        (value) => {
          loading.delete(key);
          fresh.delete(key);
          if (fresh.size >= maxEntries) fresh.delete(fresh.keys().next().value as string);
          fresh.set(key, { value, expiresAt: now() + ttlMs });
          return value;
        },
        (err: unknown) => {
          loading.delete(key);
          throw err;
        },
      );
      loading.set(key, started);
      return started;
    },
  };
}
