import type { Inbox, ProcessedStore } from '@onceflow/core';
import { testEnvelope } from '../envelopes.js';
import type { ConformanceStore } from './scenario.js';

/**
 * The store as the inbox suite's claim scenarios see it, so they run here unchanged: its `Inbox`,
 * and `ProcessedStore.begin(source, id)` answered by `RecordStore.begin`. Those scenarios call
 * `begin` only on events they claimed, so the record exists and the stand-in envelope (same
 * source and id) creates nothing.
 */
export function claimView(store: ConformanceStore): Inbox & ProcessedStore {
  return {
    claim: (envelope, options) => store.claim(envelope, options),
    markEnqueued: (source, id, token) => store.markEnqueued(source, id, token),
    release: (source, id, token) => store.release(source, id, token),
    takeStale: (options) => store.takeStale(options),
    recordConflict: (envelope) => store.recordConflict(envelope),
    purge: (options) => store.purge(options),
    stats: () => store.stats(),
    async begin(source, id, { leaseMs }) {
      const r = await store.begin(testEnvelope({ source, id }), { leaseMs, attempt: 1 });
      if (r.status === 'dead-lettered') throw new Error(`begin of ${id}: dead-lettered`);
      return r;
    },
    extend: (source, id, token, leaseMs) => store.extend(source, id, token, leaseMs),
    complete: (source, id, token) => store.complete(source, id, token),
  };
}
