import type { ClaimResult } from '@onceflow/core';
import { exec, type Queryable } from './exec.js';
import type { InboxStatements } from './statements.js';

/** One claim's first-sight insert, everything already computed. */
export interface ClaimRow {
  readonly source: string;
  readonly id: string;
  readonly payloadHash: string;
  /** The envelope in wire format. */
  readonly encoded: string;
  readonly receivedAt: Date;
  /** The token this claim would hold. */
  readonly token: string;
  readonly leaseMs: number;
  /** The record's fields from the envelope. */
  readonly type: string;
  readonly key: string | null;
  readonly traceId: string | null;
}

/** The single-row insert's parameters, in its order. */
export const claimValues = (r: ClaimRow): unknown[] => [
  r.source,
  r.id,
  r.payloadHash,
  r.encoded,
  r.receivedAt,
  r.token,
  r.leaseMs,
  r.type,
  r.key,
  r.traceId,
];

/**
 * What the insert decided: `inserted` (the row is ours: `new`), `exists` (someone's row is there:
 * take the slow path), or a final answer (another claim of the same id in the same batch got the
 * row an instant before this one).
 */
export type InsertOutcome = 'inserted' | 'exists' | ClaimResult;

/** The two statements every webhook runs: claim's first insert, then `markEnqueued`. */
export interface HotPath {
  insertClaim(row: ClaimRow): Promise<InsertOutcome>;
  markEnqueued(source: string, id: string, token: string): Promise<void>;
}

/** One statement per call. */
export function directHotPath(db: Queryable, sql: InboxStatements): HotPath {
  return {
    async insertClaim(r) {
      const inserted = await exec(db, sql.claimInsert, claimValues(r), 'claim');
      return inserted.rowCount === 1 ? 'inserted' : 'exists';
    },
    async markEnqueued(source, id, token) {
      await exec(db, sql.markEnqueued, [source, id, token], 'markEnqueued');
    },
  };
}
