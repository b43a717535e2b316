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
import { ConfigError } from '../errors.js';

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
 */
export interface MemoryInbox extends Inbox, ProcessedStore {
  /** Marks (source, id) processed without a lease (seeding tests). Idempotent. */
  markProcessed(source: string, id: string): Promise<void>;
  /** Whether (source, id) was completed or marked processed. */
  isProcessed(source: string, id: string): Promise<boolean>;
}

type InboxState = 'pending' | 'enqueued';

interface Row {
  /** Present once the receiver claimed it. */
  inbox?: {
    envelope: Envelope;
    state: InboxState;
    token: string;
    leaseUntil: number;
    claimedAt: number;
  };
  /** Processed-guard lease, while an attempt holds one. */
  lease?: { token: string; until: number };
  processedAt?: number;
  /** Time used by purge: the envelope's receivedAt, else when the row was first written. */
  receivedAt: number;
}

const optionsSchema = z.object({
  now: z.custom<() => number>((v) => typeof v === 'function').optional(),
});

const rowKey = (source: string, id: string) => `${source}\u0000${id}`;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be > 0, got ${value}`);
  return value;
}

/**
 * @example
 * const inbox = createMemoryInbox();
 * const claim = await inbox.claim(envelope, { leaseMs: 30_000 }); // { status: 'new', token }
 */
export function createMemoryInbox(options: MemoryInboxOptions = {}): MemoryInbox {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success)
    throw new ConfigError(`invalid memory inbox options: ${parsed.error.message}`);
  const now = parsed.data.now ?? Date.now;
  const rows = new Map<string, Row>();
  let conflicts = 0;

  const claimNow = (envelope: Envelope, leaseMs: number): ClaimResult => {
    const key = rowKey(envelope.source, envelope.id);
    const t = now();
    const row = rows.get(key);
    const lease = () => ({ token: randomUUID(), leaseUntil: t + leaseMs });
    if (row?.inbox === undefined) {
      if (row?.processedAt !== undefined) return { status: 'duplicate' };
      const { token, leaseUntil } = lease();
      const received = Date.parse(envelope.receivedAt);
      const inbox = { envelope, state: 'pending' as const, token, leaseUntil, claimedAt: t };
      if (row) row.inbox = inbox;
      else rows.set(key, { inbox, receivedAt: Number.isNaN(received) ? t : received });
      return { status: 'new', token };
    }
    const claimed = row.inbox;
    if (claimed.envelope.payloadHash !== envelope.payloadHash) {
      return { status: 'conflict', existingHash: claimed.envelope.payloadHash };
    }
    if (claimed.state === 'enqueued' || row.processedAt !== undefined)
      return { status: 'duplicate' };
    if (claimed.leaseUntil > t) return { status: 'in-flight' };
    Object.assign(claimed, lease());
    return { status: 'stale-pending', token: claimed.token };
  };

  const owned = (source: string, id: string, token: string) => {
    const row = rows.get(rowKey(source, id));
    const inbox = row?.inbox;
    return row && inbox?.state === 'pending' && inbox.token === token ? { row, inbox } : undefined;
  };

  const leaseOf = (source: string, id: string, token: string) => {
    const row = rows.get(rowKey(source, id));
    return row?.lease?.token === token && row.processedAt === undefined ? row : undefined;
  };

  const dropIfEmpty = (key: string, row: Row) => {
    if (!row.inbox && !row.lease && row.processedAt === undefined) rows.delete(key);
  };

  const markProcessedNow = (source: string, id: string) => {
    const key = rowKey(source, id);
    const t = now();
    const row = rows.get(key) ?? { receivedAt: t };
    rows.set(key, row);
    row.processedAt ??= t;
    row.lease = undefined;
  };

  return {
    async claim(envelope, { leaseMs }) {
      return claimNow(envelope, positive('leaseMs', leaseMs));
    },
    async markEnqueued(source, id, token) {
      const hit = owned(source, id, token);
      if (hit) hit.inbox.state = 'enqueued';
    },
    // Inbox.release and ProcessedStore.release share one name: the token says which is meant.
    async release(source, id, token) {
      const key = rowKey(source, id);
      const claim = owned(source, id, token);
      if (claim) claim.row.inbox = undefined;
      const leased = leaseOf(source, id, token);
      if (leased) leased.lease = undefined;
      const row = claim?.row ?? leased;
      if (row) dropIfEmpty(key, row);
    },
    async takeStale({ olderThanMs, leaseMs, limit }) {
      positive('leaseMs', leaseMs);
      const t = now();
      const stale = [...rows.values()]
        .flatMap((row) => (row.inbox && row.processedAt === undefined ? [row.inbox] : []))
        .filter((c) => c.state === 'pending' && c.leaseUntil <= t && c.claimedAt <= t - olderThanMs)
        .sort((a, b) => a.claimedAt - b.claimedAt)
        .slice(0, Math.max(0, limit));
      return stale.map((claim): StaleClaim => {
        claim.token = randomUUID();
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
      for (const [key, row] of rows) {
        const pending = row.inbox?.state === 'pending' && row.processedAt === undefined;
        const leased = row.lease !== undefined && row.lease.until > t;
        if (pending || leased || row.receivedAt >= cutoff) continue;
        if (row.inbox === undefined && row.processedAt === undefined) continue;
        rows.delete(key);
        removed++;
      }
      return removed;
    },
    async stats(): Promise<InboxStats> {
      let pending = 0;
      let enqueued = 0;
      let processed = 0;
      let oldest: number | undefined;
      for (const row of rows.values()) {
        if (row.processedAt !== undefined) {
          processed++;
          continue;
        }
        if (!row.inbox) continue;
        if (row.inbox.state === 'pending') pending++;
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
      positive('leaseMs', leaseMs);
      const key = rowKey(source, id);
      const t = now();
      const row = rows.get(key) ?? { receivedAt: t };
      if (row.processedAt !== undefined) return { status: 'processed' };
      if (row.lease && row.lease.until > t) {
        return { status: 'busy', retryAfterMs: row.lease.until - t };
      }
      rows.set(key, row);
      row.lease = { token: randomUUID(), until: t + leaseMs };
      return { status: 'acquired', token: row.lease.token };
    },
    async extend(source, id, token, leaseMs) {
      positive('leaseMs', leaseMs);
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
      return rows.get(rowKey(source, id))?.processedAt !== undefined;
    },
  };
}
