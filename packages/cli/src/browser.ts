import type { Envelope } from '@onceflow/core';

/** Where an inbox row stands: claimed, handed to the transport, or completed by a worker. */
export type StoredEventState = 'pending' | 'enqueued' | 'processed';

/** One envelope the inbox keeps, with its state. */
export interface StoredEvent {
  readonly envelope: Envelope;
  readonly state: StoredEventState;
}

/** A filter over stored events. Bounds apply to `envelope.receivedAt`. */
export interface InboxQuery {
  /** Received at or after this instant. */
  readonly since?: Date | undefined;
  /** Received strictly before this instant. */
  readonly until?: Date | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  /** Only rows in these states; every state when omitted. */
  readonly states?: readonly StoredEventState[] | undefined;
}

/** One page of stored events. */
export interface InboxPage {
  readonly events: readonly StoredEvent[];
  /** Opaque; pass it as `after` to read the next page. Absent on the last page. */
  readonly next?: string | undefined;
}

/**
 * Read-only access to the envelopes an inbox stores, for operators (replay, retention dry runs).
 * An optional ability beside the `Inbox` contract: a store that cannot list simply does not offer
 * it, and the commands that need it say so.
 *
 * `list` returns events in the order the inbox received them (ties broken by source, then id),
 * at most `limit`, continuing after the cursor `after` (keyset paging: stable while rows are
 * added or purged). Time bounds apply to the time the inbox recorded the event. It never changes
 * a row and is safe to call while a receiver and workers run on the same store.
 */
export interface InboxBrowser {
  list(
    query: InboxQuery & { readonly limit: number; readonly after?: string | undefined },
  ): Promise<InboxPage>;
  count(query: InboxQuery): Promise<number>;
}
