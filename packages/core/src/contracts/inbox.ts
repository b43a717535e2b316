import type { Envelope } from '../envelope.js';

/**
 * The receiver's answer from `Inbox.claim`:
 * - `new`: first sight of (source, id); the caller holds a lease on it and must publish, then
 *   `markEnqueued` (or `release` if publishing failed).
 * - `stale-pending`: an earlier claim was never enqueued and its lease ran out (the process died
 *   between claim and publish); the caller now holds it, as for `new`.
 * - `in-flight`: another request holds a live lease on it right now; answer 503 so the sender retries.
 * - `duplicate`: already enqueued with the same payload hash.
 * - `conflict`: already known with another payload hash: alert, do not publish.
 */
export type ClaimResult =
  | { readonly status: 'new'; readonly token: string }
  | { readonly status: 'stale-pending'; readonly token: string }
  | { readonly status: 'in-flight' }
  | { readonly status: 'duplicate' }
  | { readonly status: 'conflict'; readonly existingHash: string };

/** A claim that was never enqueued, handed to the relay together with a fresh lease. */
export interface StaleClaim {
  readonly envelope: Envelope;
  readonly token: string;
}

export interface InboxStats {
  /** Claimed, not yet enqueued. */
  readonly pending: number;
  /** Enqueued, not yet processed. */
  readonly enqueued: number;
  readonly processed: number;
  /** `receivedAt` of the oldest event not yet processed, if any (for the oldest-unprocessed-age alert). */
  readonly oldestUnprocessedAt?: Date | undefined;
  readonly conflicts: number;
}

/**
 * The receiver-side dedupe authority. `claim` is atomic on the unique key (source, id): of any
 * number of concurrent claims of one key exactly one gets `new`. It stores the whole envelope, so
 * the relay can publish a claim whose request died before publishing.
 *
 * Leases: `new`/`stale-pending` come with a token and a lease of `leaseMs`; `markEnqueued` and
 * `release` only act while the token still owns the row (a no-op otherwise).
 *
 * Retention: `purge` deletes enqueued and processed rows received before `olderThan`, never pending
 * ones. The inbox, not the broker, remembers ids for the whole retention, so keep it longer than
 * every sender's retry horizon (the receiver refuses to start otherwise).
 */
export interface Inbox {
  claim(envelope: Envelope, options: { readonly leaseMs: number }): Promise<ClaimResult>;
  markEnqueued(source: string, id: string, token: string): Promise<void>;
  /** Gives up a claim that could not be enqueued: the row is removed so the sender's retry is `new`. */
  release(source: string, id: string, token: string): Promise<void>;
  /** Pending rows claimed more than `olderThanMs` ago whose lease expired, each re-leased to the caller. */
  takeStale(options: {
    readonly olderThanMs: number;
    readonly leaseMs: number;
    readonly limit: number;
  }): Promise<StaleClaim[]>;
  /** Records a conflict (same id, other hash) for stats. */
  recordConflict(envelope: Envelope): Promise<void>;
  purge(options: {
    readonly olderThan: Date;
    /**
     * Stops the purge: a store checks it between batches (never inside one), stops there and
     * resolves with the rows deleted so far; the rest stay for the next purge. A store that
     * deletes in one step may finish regardless.
     */
    readonly signal?: AbortSignal | undefined;
  }): Promise<number>;
  stats(): Promise<InboxStats>;
}

/**
 * An inbox that can be told the worker is done with an event: the optional ability a receiver's
 * inbox needs when it is not the store the worker keeps its event record in (`WorkerConfig.inbox`,
 * e.g. a Redis inbox beside PostgreSQL `records`). Detect it with `hasInboxOutcomes`.
 *
 * `markProcessed(source, id)`: the worker's event record holds the event as finished (completed,
 * or dead-lettered there: a dead letter lives in the record, not in the inbox). A `received` or
 * `enqueued` row becomes processed: `stats()` counts it in `processed` (not in `enqueued` nor in
 * `oldestUnprocessedAt`), `purge` treats it as processed, a pending claim ends (the relay does not
 * publish it again; a later `markEnqueued` changes nothing). Any other row (already processed,
 * or one this store also holds as a record in flight or dead-lettered) stays as it is; an id the
 * inbox has no row for changes nothing (a store may record it as processed).
 *
 * Idempotent and safe to call concurrently from any number of processes. The worker calls it
 * before it acks, so a crash in between is repaired by the redelivery.
 */
export interface InboxOutcomes {
  markProcessed(source: string, id: string): Promise<void>;
}

/**
 * Whether `inbox` has `InboxOutcomes`.
 *
 * @example
 * if (!hasInboxOutcomes(inbox)) throw new ConfigError('this inbox cannot be told of outcomes');
 */
export function hasInboxOutcomes(inbox: unknown): inbox is InboxOutcomes {
  return (
    typeof inbox === 'object' &&
    inbox !== null &&
    typeof (inbox as Partial<InboxOutcomes>).markProcessed === 'function'
  );
}

/**
 * The envelope header a receiver stamps with its inbox's `storeId` (when the inbox has one), so a
 * worker can tell that an event was claimed in a store it neither keeps its record in nor tells
 * of outcomes (a forgotten `WorkerConfig.inbox`).
 */
export const INBOX_HEADER = 'x-onceflow-inbox';

/**
 * A store that names where it keeps its rows (optional ability, read with `storeIdOf`): the same
 * `storeId` in every process that opens the same rows, different for stores that share none
 * (`redis:{prefix}:`, `postgres:"schema"."table"`, `sqlite:/path/to/file`). Used only to compare
 * stores, never to connect to one.
 */
export interface StoreIdentity {
  readonly storeId: string;
}

/** The `storeId` of `store`, if it has one. */
export function storeIdOf(store: unknown): string | undefined {
  if (typeof store !== 'object' || store === null) return undefined;
  const id = (store as Partial<StoreIdentity>).storeId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
