import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type {
  ClaimResult,
  Inbox,
  InboxOutcomes,
  InboxStats,
  StaleClaim,
  StoreIdentity,
} from '../contracts/inbox.js';
import type { BeginResult, RecordPage, RecordStore } from '../contracts/records.js';
import type { Envelope } from '../envelope.js';
import { UsageError } from '../errors.js';
import { decodeCursor, encodeCursor, isAfter, pageSize } from '../records/cursor.js';
import { positiveMs } from '../transport-kit/arguments.js';
import { parseConfig, type SameFields } from '../transport-kit/parse-config.js';
import { createKeyedRows } from './keyed-rows.js';
import { completedNote } from '../stale/note.js';
import { blankRow, enter, matches, newRow, type Row, toRecord } from './record-row.js';

export interface MemoryStoreOptions {
  /** Clock in epoch ms, for leases, purge and history. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/**
 * An `Inbox` and a `RecordStore` in one process's memory, sharing one row per (source, id), for
 * tests and single-process tools. Every operation is atomic (it completes before the returned
 * promise is created), so interleaved async calls behave as they would on a database with a
 * unique key. It does not support distributed operations: two processes, or two instances,
 * share nothing, and everything is lost when the process exits.
 *
 * `release` serves both interfaces: it gives up whatever the token owns, the receiver's pending
 * claim (the row is removed, the next claim is `new`) or the processing lease.
 *
 * Memory: a row holds the whole envelope while its claim is pending and once it is dead-lettered;
 * otherwise its record fields and history, until `purge` removes it (run a retention janitor).
 */
export interface MemoryStore extends Inbox, RecordStore, InboxOutcomes, StoreIdentity {
  /**
   * `InboxOutcomes.markProcessed`: a received or enqueued event becomes completed, without a
   * lease. An id it has no row for is recorded as completed (seeding tests). Idempotent.
   */
  markProcessed(source: string, id: string): Promise<void>;
  /** Whether (source, id) was completed or marked processed. */
  isProcessed(source: string, id: string): Promise<boolean>;
}

const optionsSchema = z.object({
  now: z.custom<() => number>((v) => typeof v === 'function', 'must be a function').optional(),
});

// A type error the day the schema and `MemoryStoreOptions` differ.
const _optionsMatch: SameFields<z.input<typeof optionsSchema>, MemoryStoreOptions> = true;

const done = (row: Row) => row.state === 'completed' || row.state === 'discarded';

/**
 * @example
 * const store = createMemoryStore();
 * const claim = await store.claim(envelope, { leaseMs: 10_000 }); // { status: 'new', token }
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const now = parseConfig('memory store options', optionsSchema, options).now ?? Date.now;
  const rows = createKeyedRows<Row>();
  let conflicts = 0;
  // Tokens need only be unique: a random prefix per store (no two stores issue the same token)
  // and a counter, instead of a random UUID per lease.
  // Stryker disable next-line StringLiteral: without the prefix the counter alone keeps one store's tokens unique: equivalent
  const tokenPrefix = `${randomUUID()}:`;
  let issued = 0;
  // Stryker disable next-line UpdateOperator: counting down issues unique tokens too: equivalent
  const newToken = () => `${tokenPrefix}${++issued}`;

  const claimNow = (envelope: Envelope, leaseMs: number): ClaimResult => {
    const { source, id } = envelope;
    const t = now();
    const row = rows.get(source, id);
    if (row?.claimedHash === undefined) {
      if (row !== undefined && row.state !== 'received') return { status: 'duplicate' };
      const pending = { envelope, token: newToken(), leaseUntil: t + leaseMs, claimedAt: t };
      // Stryker disable next-line StringLiteral: `enter` sets the state two lines below: equivalent
      const claimed = newRow(envelope, 'received', t);
      claimed.claimedHash = envelope.payloadHash;
      claimed.pending = pending;
      enter(claimed, t, { state: 'received', actor: 'receiver' });
      rows.set(source, id, claimed);
      return { status: 'new', token: pending.token };
    }
    if (row.claimedHash !== envelope.payloadHash) {
      return { status: 'conflict', existingHash: row.claimedHash };
    }
    const pending = row.pending;
    if (pending === undefined || row.state !== 'received') return { status: 'duplicate' };
    if (pending.leaseUntil > t) return { status: 'in-flight' };
    pending.token = newToken();
    pending.leaseUntil = t + leaseMs;
    return { status: 'stale-pending', token: pending.token };
  };

  /** The row whose pending claim `token` owns. */
  const claimOf = (source: string, id: string, token: string) => {
    const row = rows.get(source, id);
    return row?.pending?.token === token ? row : undefined;
  };
  /** The row whose live or expired processing lease `token` owns. */
  const leaseOf = (source: string, id: string, token: string) => {
    const row = rows.get(source, id);
    return row?.lease?.token === token && row.state === 'processing' ? row : undefined;
  };

  const completeNow = (row: Row, t: number, actor?: string, note?: string) => {
    row.lease = undefined;
    row.nextAttemptAt = undefined;
    enter(row, t, { state: 'completed', attempt: row.attempts || undefined, actor, note });
  };

  return {
    // Unique to this instance: no other store, in this process or another, shares its rows.
    storeId: `memory:${tokenPrefix.slice(0, -1)}`,
    async claim(envelope, { leaseMs }) {
      return claimNow(envelope, positiveMs('leaseMs', leaseMs));
    },
    async markEnqueued(source, id, token) {
      const row = claimOf(source, id, token);
      if (!row) return;
      row.pending = undefined; // enqueued: the envelope is on the broker now
      if (row.state === 'received') enter(row, now(), { state: 'enqueued', actor: 'receiver' });
    },
    // Inbox.release and RecordStore.release share one name: the token says which is meant.
    async release(source, id, token) {
      const claimed = claimOf(source, id, token);
      if (claimed && claimed.state === 'received') {
        rows.delete(source, id); // the sender's retry claims it anew
        return;
      }
      if (claimed) claimed.pending = undefined;
      const row = leaseOf(source, id, token);
      if (!row) return;
      row.lease = undefined;
      enter(row, now(), { state: 'enqueued', attempt: row.attempts, actor: row.consumer });
    },
    async scheduleRetry(source, id, token, { error, nextAttemptAt }) {
      if (Number.isNaN(nextAttemptAt.getTime()))
        throw new UsageError('nextAttemptAt is not a date');
      const row = leaseOf(source, id, token);
      if (!row) return;
      row.lease = undefined;
      row.lastError = error ?? row.lastError;
      row.nextAttemptAt = nextAttemptAt.getTime();
      enter(row, now(), {
        state: 'retry-scheduled',
        attempt: row.attempts,
        code: error?.code,
        actor: row.consumer,
      });
    },
    async takeStale({ olderThanMs, leaseMs, limit }) {
      positiveMs('leaseMs', leaseMs);
      const t = now();
      const stale = [...rows.entries()]
        .flatMap(([, , row]) => (row.pending && row.state === 'received' ? [row.pending] : []))
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
    // One synchronous pass, so `signal` is honoured only before it starts.
    async purge({ olderThan, signal }) {
      const cutoff = olderThan.getTime();
      let removed = 0;
      if (signal?.aborted === true) return removed;
      for (const [source, id, row] of rows.entries()) {
        const finished = done(row) || row.state === 'enqueued';
        if (!finished || row.receivedAt >= cutoff) continue;
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
        if (done(row)) {
          processed++;
          continue;
        }
        if (row.claimedHash === undefined) continue;
        if (row.state === 'received') pending++;
        else if (row.state !== 'dead-lettered') enqueued++;
        if (row.state !== 'dead-lettered')
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

    async begin(envelope, { leaseMs, attempt, consumer, redrive }): Promise<BeginResult> {
      positiveMs('leaseMs', leaseMs);
      const { source, id } = envelope;
      const t = now();
      // Stryker disable next-line StringLiteral: a new row's first state is read only as not done, not dead-lettered, not processing, then `enter` sets it: equivalent
      const row = rows.get(source, id) ?? newRow(envelope, 'enqueued', t);
      if (done(row)) return { status: 'processed' };
      if (row.state === 'dead-lettered' && redrive === undefined)
        return { status: 'dead-lettered' };
      if (row.state === 'processing' && row.lease && row.lease.until > t) {
        return { status: 'busy', retryAfterMs: row.lease.until - t };
      }
      rows.set(source, id, row);
      row.lease = { token: newToken(), until: t + leaseMs };
      row.attempts = attempt;
      row.consumer = consumer;
      row.nextAttemptAt = undefined;
      enter(row, t, {
        state: 'processing',
        attempt,
        actor: consumer,
        note: row.state === 'dead-lettered' ? `redriven by ${redrive}` : undefined,
      });
      return { status: 'acquired', token: row.lease.token };
    },
    async extend(source, id, token, leaseMs) {
      positiveMs('leaseMs', leaseMs);
      const row = leaseOf(source, id, token);
      if (!row?.lease) return false;
      row.lease.until = now() + leaseMs;
      return true;
    },
    async complete(source, id, token, options) {
      const row = leaseOf(source, id, token);
      if (row) completeNow(row, now(), row.consumer, completedNote(options?.note));
    },
    async deadLetter(envelope, token, fields) {
      const { source, id } = envelope;
      const t = now();
      // Stryker disable next-line StringLiteral: a new row's first state is read only as not done, not dead-lettered, not processing, then `enter` sets it: equivalent
      const row = rows.get(source, id) ?? newRow(envelope, 'enqueued', t);
      if (done(row) || row.state === 'dead-lettered') return;
      const heldByOther =
        row.state === 'processing' && row.lease && row.lease.until > t && row.lease.token !== token;
      if (heldByOther) return;
      rows.set(source, id, row);
      Object.assign(row, {
        lease: undefined,
        nextAttemptAt: undefined,
        envelope,
        reason: fields.reason,
        lastError: fields.error ?? row.lastError,
        attempts: Math.max(row.attempts, fields.attempts),
      });
      enter(row, t, {
        state: 'dead-lettered',
        attempt: fields.attempts,
        code: fields.error?.code,
        actor: fields.actor ?? row.consumer,
        note: fields.note,
      });
    },
    async get(source, id) {
      const row = rows.get(source, id);
      if (!row) return undefined;
      return { ...toRecord(source, id, row), envelope: row.envelope ?? row.pending?.envelope };
    },
    async list(query): Promise<RecordPage> {
      const limit = pageSize(query.limit);
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const found = [...rows.entries()]
        .filter(([source, id, row]) => {
          if (!matches(row, source, query)) return false;
          return after === undefined || isAfter(after, row.updatedAt, source, id);
        })
        .sort(
          ([sa, ia, a], [sb, ib, b]) =>
            a.updatedAt - b.updatedAt || (sa < sb ? -1 : sa > sb ? 1 : ia < ib ? -1 : 1),
        );
      const page = found.slice(0, limit);
      const last = page.at(-1);
      return {
        records: page.map(([source, id, row]) => toRecord(source, id, row)),
        next:
          found.length > limit && last
            ? encodeCursor({ updatedAt: last[2].updatedAt, source: last[0], id: last[1] })
            : undefined,
      };
    },
    async count(filter) {
      let n = 0;
      for (const [source, , row] of rows.entries()) if (matches(row, source, filter)) n++;
      return n;
    },
    async act(source, id, { kind, actor }) {
      const row = rows.get(source, id);
      if (row?.state !== 'dead-lettered') return false;
      const t = now();
      if (kind === 'redriven') {
        row.attempts = 0;
        enter(row, t, { state: 'enqueued', actor, note: 'redriven' });
      } else {
        enter(row, t, { state: 'discarded', actor, note: 'purged' });
      }
      return true;
    },

    async markProcessed(source, id) {
      const t = now();
      const row = rows.get(source, id) ?? blankRow(t);
      rows.set(source, id, row);
      if (row.state === 'received' || row.state === 'enqueued') completeNow(row, t, 'worker');
    },
    async isProcessed(source, id) {
      const row = rows.get(source, id);
      return row !== undefined && done(row);
    },
  };
}
