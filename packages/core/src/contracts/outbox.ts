import type { Envelope, EnvelopeInit } from '../envelope.js';
import type { ErrorInfo } from '../errors.js';

/**
 * An event written to the outbox in the caller's transaction: an `EnvelopeInit` whose `id` may be
 * left out (the store then chooses one, once: it is kept across every re-send). `key` is the
 * ordering key: the dispatcher publishes the events of one key one at a time, in the order they
 * were added.
 */
export type OutboxEvent = Omit<EnvelopeInit, 'id' | 'receivedAt'> & {
  /** The event id: the envelope id and the broker dedupe key. Default: a random UUID. */
  readonly id?: string | undefined;
};

/** One outbox row handed to a dispatcher under a lease. */
export interface OutboxRow {
  /** The row's place in the outbox (add order), the store's handle on it. */
  readonly seq: number;
  /** What is published: the same id, bytes and hash on every re-send. */
  readonly envelope: Envelope;
  /** Leases taken on this row so far, this one included. */
  readonly attempts: number;
}

/** A batch of rows leased to one dispatcher: none of them is handed to another until it expires. */
export interface OutboxLease {
  /** Owns the rows while the lease lasts; `markSent` and `reschedule` act only with it. */
  readonly token: string;
  /** Oldest first; empty when nothing is due. */
  readonly rows: readonly OutboxRow[];
}

/** What `stats` reports, for the outbox metrics. */
export interface OutboxStats {
  /** Rows not yet sent (leased ones included). */
  readonly unsent: number;
  /** Age of the oldest unsent row in ms, measured on the store's clock; 0 when none. */
  readonly oldestUnsentAgeMs: number;
}

/**
 * The store side of a transactional outbox, as the dispatcher uses it. Events are written by the
 * store's own `add(tx, event)` in the caller's transaction, so a transaction that rolls back
 * leaves no row and nothing is ever published for it.
 *
 * Ordering: `lease` hands out only the oldest unsent row of each ordering key, and only when that
 * row is due and not under a live lease. So no two rows of one key are ever in flight, and a row
 * that failed (rescheduled for later) holds back the later rows of its key until it is sent.
 * Rows without a key have no order among themselves.
 *
 * Concurrency: any number of dispatchers may lease at once; each row goes to one of them until its
 * lease expires. A dispatcher that dies holding a lease loses nothing: the rows are due again when
 * the lease ends (and may then be published twice: broker dedupe on the event id and the worker's
 * record guard make the second copy harmless).
 */
export interface OutboxStore {
  /** Leases up to `limit` due rows for `leaseMs`. */
  lease(options: { readonly limit: number; readonly leaseMs: number }): Promise<OutboxLease>;
  /** The broker confirmed the rows: they are sent, and kept until `purgeSent` removes them. */
  markSent(token: string, seqs: readonly number[]): Promise<void>;
  /**
   * Publishing failed: the rows are given up and due again `delayMs` from now, keeping `error`.
   * Acts only on rows `token` still owns.
   */
  reschedule(
    token: string,
    seqs: readonly number[],
    retry: { readonly delayMs: number; readonly error?: ErrorInfo | undefined },
  ): Promise<void>;
  /** Deletes up to `limit` rows sent more than `olderThanMs` ago; resolves with how many. */
  purgeSent(options: { readonly olderThanMs: number; readonly limit: number }): Promise<number>;
  stats(): Promise<OutboxStats>;
}
