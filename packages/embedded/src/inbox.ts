import { randomUUID } from 'node:crypto';
import {
  type ClaimResult,
  type Envelope,
  type Inbox,
  type InboxOutcomes,
  type InboxStats,
  type StaleClaim,
  UsageError,
} from '@onceflow/core';
import {
  decodeEnvelope,
  encodeEnvelope,
  positiveMs,
  purgeInPacedBatches,
  traceIdOf,
} from '@onceflow/core/kit';
import type { DatabaseHandle } from './database.js';
import { asStore } from './errors.js';
import { appendHistory, entryJson } from './history.js';

interface ExistingRow {
  payload_hash: string | null;
  state: string;
  claim_token: string | null;
  claim_expires_at: number | null;
}

/** Rows purge may delete: finished, or on the broker with no attempt running. */
const PURGEABLE = `state IN ('enqueued', 'completed', 'discarded')`;
/** How `purge` paces its statements (`purgeBatchSize`, `purgePauseRatio` in the config). */
export interface PurgePacing {
  readonly batchSize: number;
  readonly pauseRatio: number;
}

/** The contract's purge options (`olderThan`, `signal`). */
type PurgeOptions = Parameters<Inbox['purge']>[0];

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const toMs = (iso: string, fallback: number): number => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : fallback;
};

/**
 * The SQLite inbox, on the event record's rows. Every method is one statement or one short
 * IMMEDIATE transaction on the shared file, so `claim` is atomic across every process using the
 * file: of concurrent claims of one (source, id) exactly one gets `new`, in state `received`. An
 * event the record already holds without a claim (it reached a worker without passing a
 * receiver) answers `duplicate`.
 *
 * A claim a worker already began (the process died between publish and `markEnqueued`) is no
 * longer `received`: it answers `duplicate` and is not handed to the relay; `markEnqueued` and
 * `release` then only drop the claim token, leaving the record where the worker put it.
 *
 * Retention: `purge` deletes `enqueued`, `completed` and `discarded` records received before
 * `olderThan` (never `received`, `processing`, `retry-scheduled` or `dead-lettered` ones) and
 * conflict records seen before it, `pacing.batchSize` rows per statement, pausing
 * `pacing.pauseRatio` times each statement's run time after it so claims run between them; it
 * returns the number of records deleted. An aborted `signal` stops it between statements (the
 * rows left stay for the next purge). `stats().processed` counts completed and discarded events,
 * with or without a claim.
 */
export function createSqliteInbox(
  handle: DatabaseHandle,
  pacing: PurgePacing,
): Inbox & InboxOutcomes {
  const claim = (envelope: Envelope, leaseMs: number): ClaimResult =>
    handle.immediate(() => {
      const now = Date.now();
      const token = randomUUID();
      const inserted = handle
        .stmt(
          `INSERT INTO onceflow_inbox (source, id, state, claim_token, claim_expires_at,
             claimed_at, payload_hash, received_at, updated_at, type, ordering_key, trace_id,
             history, envelope)
           VALUES (?, ?, 'received', ?, ?, ?, ?, ?, ?, ?, ?, ?, '[' || ? || ']', ?)
           ON CONFLICT DO NOTHING`,
        )
        .run(
          envelope.source,
          envelope.id,
          token,
          now + leaseMs,
          now,
          envelope.payloadHash,
          toMs(envelope.receivedAt, now),
          now,
          envelope.type,
          envelope.key ?? null,
          traceIdOf(envelope) ?? null,
          entryJson(now, { state: 'received', actor: 'receiver' }),
          encodeEnvelope(envelope),
        );
      if (inserted.changes === 1) return { status: 'new', token };
      const row = handle
        .stmt(
          `SELECT payload_hash, state, claim_token, claim_expires_at
           FROM onceflow_inbox WHERE source = ? AND id = ?`,
        )
        .get(envelope.source, envelope.id) as ExistingRow;
      if (row.payload_hash === null) return { status: 'duplicate' };
      if (row.payload_hash !== envelope.payloadHash) {
        return { status: 'conflict', existingHash: row.payload_hash };
      }
      if (row.state !== 'received' || row.claim_token === null) return { status: 'duplicate' };
      if ((row.claim_expires_at ?? 0) > now) return { status: 'in-flight' };
      handle
        .stmt(
          `UPDATE onceflow_inbox SET claim_token = ?, claim_expires_at = ?
           WHERE source = ? AND id = ?`,
        )
        .run(token, now + leaseMs, envelope.source, envelope.id);
      return { status: 'stale-pending', token };
    }, handle.receiveWaitMs);

  const takeStale = (olderThanMs: number, leaseMs: number, limit: number): StaleClaim[] => {
    const now = Date.now();
    const rows = handle.immediate(
      () =>
        handle
          .stmt(
            `UPDATE onceflow_inbox
             SET claim_token = lower(hex(randomblob(16))), claim_expires_at = ?
             WHERE (source, id) IN (
               SELECT source, id FROM onceflow_inbox
               WHERE state = 'received' AND claimed_at <= ? AND claim_expires_at <= ?
               ORDER BY claimed_at LIMIT ?)
             RETURNING envelope, claim_token AS token, claimed_at`,
          )
          .all(now + leaseMs, now - olderThanMs, now, limit) as {
          envelope: string;
          token: string;
          claimed_at: number;
        }[],
    );
    rows.sort((a, b) => a.claimed_at - b.claimed_at);
    return rows.map((r) => ({ envelope: decodeEnvelope(r.envelope), token: r.token }));
  };

  /** Claimed events not yet handled (dead letters are not waiting: an operator acts on them). */
  const WAITING = `payload_hash IS NOT NULL
    AND state IN ('received', 'enqueued', 'processing', 'retry-scheduled')`;

  const purge = async ({ olderThan, signal }: PurgeOptions): Promise<number> => {
    const cutoff = olderThan.getTime();
    if (Number.isNaN(cutoff)) throw new UsageError('purge: olderThan must be a valid Date');
    const { batchSize, pauseRatio } = pacing;
    // Each batch is its own statement (a short write lock); `from` skips the kept rows already passed.
    const drain = (sql: string) => {
      let from = Number.MIN_SAFE_INTEGER;
      let first = true;
      return purgeInPacedBatches(
        async () => {
          if (!first && pauseRatio === 0) await nextTurn(); // unpaced: still let I/O in between
          first = false;
          const rows = await asStore(
            'purge',
            () => handle.stmt(sql).all(from, cutoff, batchSize) as { at: number }[],
          );
          for (const r of rows) if (r.at > from) from = r.at;
          return rows.length;
        },
        { batchSize, pauseRatio, signal },
      );
    };
    await drain(
      `DELETE FROM onceflow_inbox_conflicts WHERE seq IN (SELECT seq FROM onceflow_inbox_conflicts
         WHERE seen_at >= ? AND seen_at < ? ORDER BY seen_at LIMIT ?) RETURNING seen_at AS at`,
    );
    if (signal?.aborted === true) return 0;
    return drain(
      `DELETE FROM onceflow_inbox WHERE rowid IN (SELECT rowid FROM onceflow_inbox
         WHERE received_at >= ? AND received_at < ? AND ${PURGEABLE}
         ORDER BY received_at LIMIT ?) RETURNING received_at AS at`,
    );
  };

  const stats = (): InboxStats => {
    const row = handle
      .stmt(
        `SELECT
           count(*) FILTER (WHERE state = 'received') AS pending,
           count(*) FILTER (WHERE ${WAITING} AND state != 'received') AS enqueued,
           count(*) FILTER (WHERE state IN ('completed', 'discarded')) AS processed,
           min(received_at) FILTER (WHERE ${WAITING}) AS oldest,
           (SELECT count(*) FROM onceflow_inbox_conflicts) AS conflicts
         FROM onceflow_inbox`,
      )
      .get() as Record<'pending' | 'enqueued' | 'processed' | 'conflicts', number> & {
      oldest: number | null;
    };
    return {
      pending: row.pending,
      enqueued: row.enqueued,
      processed: row.processed,
      oldestUnprocessedAt: row.oldest === null ? undefined : new Date(row.oldest),
      conflicts: row.conflicts,
    };
  };

  return {
    claim: async (envelope, { leaseMs }) => {
      positiveMs('leaseMs', leaseMs); // a call outside the contract, not a store failure
      return asStore('claim', () => claim(envelope, leaseMs));
    },
    // A worker that began first keeps the record where it put it: only the claim token goes.
    markEnqueued: (source, id, token) =>
      asStore('markEnqueued', () => {
        const now = Date.now();
        handle
          .stmt(
            `UPDATE onceflow_inbox SET claim_token = NULL, claim_expires_at = NULL,
               state = CASE WHEN state = 'received' THEN 'enqueued' ELSE state END,
               updated_at = CASE WHEN state = 'received' THEN @now ELSE updated_at END,
               history = CASE WHEN state = 'received' THEN ${appendHistory('@entry')}
                 ELSE history END
             WHERE source = @source AND id = @id AND claim_token = @token`,
          )
          .run({
            source,
            id,
            token,
            now,
            entry: entryJson(now, { state: 'enqueued', actor: 'receiver' }),
          });
      }),
    release: (source, id, token) =>
      asStore('release', () =>
        handle.immediate(() => {
          const args = [source, id, token];
          const removed = handle
            .stmt(
              `DELETE FROM onceflow_inbox
               WHERE source = ? AND id = ? AND claim_token = ? AND state = 'received'`,
            )
            .run(...args);
          if (removed.changes === 1) return;
          handle
            .stmt(
              `UPDATE onceflow_inbox SET claim_token = NULL, claim_expires_at = NULL
               WHERE source = ? AND id = ? AND claim_token = ?`,
            )
            .run(...args);
        }),
      ),
    takeStale: async ({ olderThanMs, leaseMs, limit }) => {
      positiveMs('leaseMs', leaseMs);
      return asStore('takeStale', () => takeStale(olderThanMs, leaseMs, limit));
    },
    recordConflict: (envelope) =>
      asStore('recordConflict', () => {
        handle
          .stmt(
            `INSERT INTO onceflow_inbox_conflicts (source, id, payload_hash, seen_at)
             VALUES (?, ?, ?, ?)`,
          )
          .run(envelope.source, envelope.id, envelope.payloadHash, Date.now());
      }),
    // InboxOutcomes: the worker's record (another store) finished it. One statement; a claim
    // token goes with it, so the relay passes it over and a late markEnqueued changes nothing.
    markProcessed: (source, id) =>
      asStore('markProcessed', () => {
        const now = Date.now();
        handle
          .stmt(
            `UPDATE onceflow_inbox SET claim_token = NULL, claim_expires_at = NULL,
               state = 'completed', updated_at = @now, history = ${appendHistory('@entry')}
             WHERE source = @source AND id = @id AND state IN ('received', 'enqueued')`,
          )
          .run({ source, id, now, entry: entryJson(now, { state: 'completed', actor: 'worker' }) });
      }),
    purge,
    stats: () => asStore('stats', stats),
  };
}
