import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type {
  BeginResult,
  ClaimResult,
  Inbox,
  InboxStats,
  ProcessedStore,
  StaleClaim,
} from '../contracts/inbox.js';
import type { Envelope } from '../envelope.js';
import { positiveMs } from '../transport-kit/arguments.js';
import { parseConfig } from '../transport-kit/parse-config.js';
import { createKeyedRows } from './keyed-rows.js';

export interface MemoryInboxOptions {
  /** Clock in epoch ms, for leases and purge. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/**
 * An `Inbox` and `ProcessedStore` in one process's memory, sharing one row per (source, id), for
 * tests and single-process tools. Every operation is atomic (it completes before the returned
 * promise is created), so interleaved async calls behave as they would on a database with a
 * unique key. It does not support distributed operations: two processes, or two instances,
 * share nothing, and everything is lost when the process exits.
 *
 * `release` serves both interfaces: it gives up whatever the token owns, the receiver's pending
 * claim (the row is removed, the next claim is `new`) or the processing lease.
 *
 * Memory: a row holds the whole envelope only while its claim is pending; once enqueued it keeps
 * the payload hash and times, until `purge` removes it (run a retention janitor).
 */
export interface MemoryInbox extends Inbox, ProcessedStore {
  /** Marks (source, id) processed without a lease (seeding tests). Idempotent. */
  markProcessed(source: string, id: string): Promise<void>;
  /** Whether (source, id) was completed or marked processed. */
  isProcessed(source: string, id: string): Promise<boolean>;
}

/** A receiver's claim not yet enqueued: what the relay needs to publish it. */
interface PendingClaim {
  readonly envelope: Envelope;
  token: string;
  leaseUntil: number;
  readonly claimedAt: number;
}

/**
 * One (source, id). Once enqueued a claim keeps only its payload hash, which is all a later claim
 * compares: the envelope is on the broker by then, and rows live for the whole retention.
 */
interface Row {
  /** The payload hash of the receiver's claim, from `claim` on (pending or enqueued). */
  claimedHash?: string | undefined;
  /** Present while the claim is pending. */
  pending?: PendingClaim | undefined;
  /** Processed-guard lease, while an attempt holds one. */
  lease?: { token: string; until: number } | undefined;
  processedAt?: number;
  /** Time used by purge: the envelope's receivedAt, else when the row was first written. */
  receivedAt: number;
}

const optionsSchema = z.object({
  now: z.custom<() => number>((v) => typeof v === 'function').optional(),
});

/** The envelope's receivedAt in epoch ms, or `fallback` when it does not parse. */
function receivedAtOf(envelope: Envelope, fallback: number): number {
  const received = Date.parse(envelope.receivedAt);
  return Number.isNaN(received) ? fallback : received;
}

/**
 * @example
 * const inbox = createMemoryInbox();
 * const claim = await inbox.claim(envelope, { leaseMs: 30_000 }); // { status: 'new', token }
 */
export function createMemoryInbox(options: MemoryInboxOptions = {}): MemoryInbox {
  const now = parseConfig('memory inbox options', optionsSchema, options).now ?? Date.now;
  const rows = createKeyedRows<Row>();
  let conflicts = 0;
  // Tokens need only be unique: a random prefix per inbox (no two inboxes issue the same token)
  // and a counter, instead of a random UUID per lease.
  const tokenPrefix = `${randomUUID()}:`;
  let issued = 0;
  const newToken = () => `${tokenPrefix}${++issued}`;

  const claimNow = (envelope: Envelope, leaseMs: number): ClaimResult => {
    const { source, id } = envelope;
    const t = now();
    const row = rows.get(source, id);
    if (row?.claimedHash === undefined) {
      if (row?.processedAt !== undefined) return { status: 'duplicate' };
      const pending = { envelope, token: newToken(), leaseUntil: t + leaseMs, claimedAt: t };
      const claimedHash = envelope.payloadHash;
      if (row) Object.assign(row, { claimedHash, pending });
      else rows.set(source, id, { claimedHash, pending, receivedAt: receivedAtOf(envelope, t) });
      return { status: 'new', token: pending.token };
    }
    if (row.claimedHash !== envelope.payloadHash) {
      return { status: 'conflict', existingHash: row.claimedHash };
    }
    const pending = row.pending;
    if (pending === undefined || row.processedAt !== undefined) return { status: 'duplicate' };
    if (pending.leaseUntil > t) return { status: 'in-flight' };
    pending.token = newToken();
    pending.leaseUntil = t + leaseMs;
    return { status: 'stale-pending', token: pending.token };
  };

  /** The row whose pending claim `token` owns. */
  const owned = (source: string, id: string, token: string) => {
    const row = rows.get(source, id);
    return row?.pending?.token === token ? row : undefined;
  };

  const leaseOf = (source: string, id: string, token: string) => {
    const row = rows.get(source, id);
    return row?.lease?.token === token && row.processedAt === undefined ? row : undefined;
  };

  const dropIfEmpty = (source: string, id: string, row: Row) => {
    if (row.claimedHash === undefined && !row.lease && row.processedAt === undefined) {
      rows.delete(source, id);
    }
  };

  const markProcessedNow = (source: string, id: string) => {
    const t = now();
    const row = rows.get(source, id) ?? { receivedAt: t };
    rows.set(source, id, row);
    row.processedAt ??= t;
    row.lease = undefined;
  };

  return {
    async claim(envelope, { leaseMs }) {
      return claimNow(envelope, positiveMs('leaseMs', leaseMs));
    },
    async markEnqueued(source, id, token) {
      const row = owned(source, id, token);
      if (row) row.pending = undefined; // enqueued: only the hash is kept
    },
    // Inbox.release and ProcessedStore.release share one name: the token says which is meant.
    async release(source, id, token) {
      const claimed = owned(source, id, token);
      if (claimed) {
        claimed.claimedHash = undefined;
        claimed.pending = undefined;
      }
      const leased = leaseOf(source, id, token);
      if (leased) leased.lease = undefined;
      const row = claimed ?? leased;
      if (row) dropIfEmpty(source, id, row);
    },
    async takeStale({ olderThanMs, leaseMs, limit }) {
      positiveMs('leaseMs', leaseMs);
      const t = now();
      const stale = [...rows.entries()]
        .flatMap(([, , row]) => (row.pending && row.processedAt === undefined ? [row.pending] : []))
        .filter((c) => c.leaseUntil <= t && c.claimedAt <= t - olderThanMs)
        .sort((a, b) => a.claimedAt - b.claimedAt)
        .slice(0, Math.max(0, limit));
      return stale.map((claim): StaleClaim => {
        claim.token = newToken();
        claim.leaseUntil = t + leaseMs;
        return { envelope: claim.envelope, token: claim.token };
      });
    },
    async recordConflict() {
      conflicts++;
    },
    async purge({ olderThan }) {
      const cutoff = olderThan.getTime();
      const t = now();
      let removed = 0;
      for (const [source, id, row] of rows.entries()) {
        const pending = row.pending !== undefined && row.processedAt === undefined;
        const leased = row.lease !== undefined && row.lease.until > t;
        if (pending || leased || row.receivedAt >= cutoff) continue;
        if (row.claimedHash === undefined && row.processedAt === undefined) continue;
        rows.delete(source, id);
        removed++;
      }
      return removed;
    },
    async stats(): Promise<InboxStats> {
      let pending = 0;
      let enqueued = 0;
      let processed = 0;
      let oldest: number | undefined;
      for (const [, , row] of rows.entries()) {
        if (row.processedAt !== undefined) {
          processed++;
          continue;
        }
        if (row.claimedHash === undefined) continue;
        if (row.pending) pending++;
        else enqueued++;
        oldest = oldest === undefined ? row.receivedAt : Math.min(oldest, row.receivedAt);
      }
      return {
        pending,
        enqueued,
        processed,
        oldestUnprocessedAt: oldest === undefined ? undefined : new Date(oldest),
        conflicts,
      };
    },

    async begin(source, id, { leaseMs }): Promise<BeginResult> {
      positiveMs('leaseMs', leaseMs);
      const t = now();
      const row = rows.get(source, id) ?? { receivedAt: t };
      if (row.processedAt !== undefined) return { status: 'processed' };
      if (row.lease && row.lease.until > t) {
        return { status: 'busy', retryAfterMs: row.lease.until - t };
      }
      rows.set(source, id, row);
      row.lease = { token: newToken(), until: t + leaseMs };
      return { status: 'acquired', token: row.lease.token };
    },
    async extend(source, id, token, leaseMs) {
      positiveMs('leaseMs', leaseMs);
      const row = leaseOf(source, id, token);
      if (!row?.lease) return false;
      row.lease.until = now() + leaseMs;
      return true;
    },
    async complete(source, id, token) {
      if (leaseOf(source, id, token)) markProcessedNow(source, id);
    },
    async markProcessed(source, id) {
      markProcessedNow(source, id);
    },
    async isProcessed(source, id) {
      return rows.get(source, id)?.processedAt !== undefined;
    },
  };
}
