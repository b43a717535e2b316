import {
  decodeEnvelope,
  encodeEnvelope,
  nonNegative,
  positiveMs,
  purgeInPacedBatches,
} from '@onceflow/core/kit';
import type { Envelope, Inbox, InboxOutcomes, InboxStats, StaleClaim } from '@onceflow/core';
import { claim } from './claim.js';
import { exec, type Queryable } from './exec.js';
import type { HotPath } from './hot-path.js';
import type { InboxStatements } from './statements.js';

interface StatsRow {
  pending: string;
  enqueued: string;
  processed: string;
  oldest: Date | null;
  conflicts: string;
}

/**
 * The receiver-side half of the store (`release` lives with the store: it serves both halves).
 * Every method is one autocommit statement (claim: at most two per round; `hot` may share its
 * statements with concurrent callers), safe to call from any number of processes at once.
 */
export function createInboxMethods(
  db: Queryable,
  sql: InboxStatements,
  hot: HotPath,
  pacing: { readonly batchSize: number; readonly pauseRatio: number },
): Omit<Inbox, 'release'> & InboxOutcomes {
  return {
    claim: (envelope, { leaseMs }) => claim(db, sql, hot, envelope, leaseMs),

    markEnqueued: (source, id, token) => hot.markEnqueued(source, id, token),

    async markProcessed(source, id) {
      await exec(db, sql.markProcessed, [source, id], 'markProcessed');
    },

    async takeStale({ olderThanMs, leaseMs, limit }): Promise<StaleClaim[]> {
      positiveMs('leaseMs', leaseMs);
      nonNegative('olderThanMs', olderThanMs);
      if (Math.floor(nonNegative('limit', limit)) === 0) return [];
      const res = await exec<{ envelope: string; lease_token: string; claimed_at: Date }>(
        db,
        sql.takeStale,
        [olderThanMs, leaseMs, Math.floor(limit)],
        'takeStale',
      );
      return res.rows
        .sort((a, b) => a.claimed_at.getTime() - b.claimed_at.getTime())
        .map((r) => ({ envelope: decodeEnvelope(r.envelope), token: r.lease_token }));
    },

    async recordConflict(envelope: Envelope) {
      const values = [envelope.source, envelope.id, envelope.payloadHash, encodeEnvelope(envelope)];
      await exec(db, sql.recordConflict, values, 'recordConflict');
    },

    // Records, then conflicts, each paced; `signal` stops either between two batches.
    async purge({ olderThan, signal }) {
      const options = { ...pacing, signal };
      const batch = (statement: typeof sql.purgeBatch) => async () =>
        (await exec(db, statement, [olderThan, pacing.batchSize], 'purge')).rowCount;
      const purged = await purgeInPacedBatches(batch(sql.purgeBatch), options);
      await purgeInPacedBatches(batch(sql.purgeConflictsBatch), options);
      return purged;
    },

    async stats(): Promise<InboxStats> {
      const res = await exec<StatsRow>(db, sql.stats, [], 'stats');
      const row = res.rows[0];
      return {
        pending: Number(row?.pending ?? 0),
        enqueued: Number(row?.enqueued ?? 0),
        processed: Number(row?.processed ?? 0),
        oldestUnprocessedAt: row?.oldest ?? undefined,
        conflicts: Number(row?.conflicts ?? 0),
      };
    },
  };
}
