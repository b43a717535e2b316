import { randomUUID } from 'node:crypto';
import type { BeginResult, ProcessedStore } from '@onceflow/core';
import { positiveMs } from '@onceflow/core/kit';
import { exec, type Queryable } from './exec.js';
import type { InboxStatements } from './statements.js';

/** Rounds of upsert-then-inspect before answering `busy` (the lease kept changing hands). */
const MAX_ROUNDS = 3;
/** `retryAfterMs` when the holder could not be pinned down. */
const FALLBACK_RETRY_MS = 100;

/**
 * The worker-side half (the processed-guard); `release` lives with the store. `begin` is one
 * atomic upsert, so of any number of concurrent attempts exactly one acquires a live lease; it
 * works for ids that never passed a receiver (the row is created). `complete` and `extend` act
 * only while the token owns the lease (even if it ran out, as long as no one took it over);
 * `complete` is idempotent.
 */
export function createProcessedMethods(
  db: Queryable,
  sql: InboxStatements,
): Omit<ProcessedStore, 'release'> {
  return {
    async begin(source, id, { leaseMs }): Promise<BeginResult> {
      positiveMs('leaseMs', leaseMs);
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const token = randomUUID();
        const upsert = await exec(db, sql.begin, [source, id, token, leaseMs], 'begin');
        if (upsert.rowCount === 1) return { status: 'acquired', token };

        const res = await exec<{ state: string; remaining_ms: number | null }>(
          db,
          sql.beginExisting,
          [source, id],
          'begin',
        );
        const row = res.rows[0];
        if (row === undefined) continue; // deleted in between (purged): go round
        if (row.state === 'processed') return { status: 'processed' };
        const remaining = row.remaining_ms ?? 0;
        if (remaining > 0) return { status: 'busy', retryAfterMs: remaining };
      }
      return { status: 'busy', retryAfterMs: FALLBACK_RETRY_MS };
    },

    async extend(source, id, token, leaseMs) {
      positiveMs('leaseMs', leaseMs);
      const res = await exec(db, sql.extend, [source, id, token, leaseMs], 'extend');
      return res.rowCount === 1;
    },

    async complete(source, id, token) {
      await exec(db, sql.complete, [source, id, token], 'complete');
    },
  };
}
