/**
 * Rows keyed by (source, id), kept as one map per source: a lookup builds no key string, and the
 * id strings callers already hold are the keys (a `source + id` key would be a new string to hash
 * and keep per row). Synchronous and single-process, like everything in the memory stores.
 */
export interface KeyedRows<R> {
  get(source: string, id: string): R | undefined;
  set(source: string, id: string, row: R): void;
  delete(source: string, id: string): void;
  /** Every row with its key. Deleting the row at hand while iterating is allowed. */
  entries(): Generator<[source: string, id: string, row: R], void, undefined>;
}

/**
 * @example
 * const rows = createKeyedRows<{ hash: string }>();
 * rows.set('stripe', 'evt_1', { hash });
 * rows.get('stripe', 'evt_1'); // { hash }
 */
export function createKeyedRows<R>(): KeyedRows<R> {
  const bySource = new Map<string, Map<string, R>>();
  return {
    get: (source, id) => bySource.get(source)?.get(id),
    set(source, id, row) {
      let rows = bySource.get(source);
      if (!rows) {
        rows = new Map();
        bySource.set(source, rows);
      }
      rows.set(id, row);
    },
    delete(source, id) {
      // Stryker disable next-line OptionalChaining: callers delete only a row they have just found, so its source has a map: equivalent
      bySource.get(source)?.delete(id);
    },
    *entries() {
      for (const [source, rows] of bySource) {
        for (const [id, row] of rows) yield [source, id, row];
      }
    },
  };
}
