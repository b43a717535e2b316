import type { Envelope, EventState } from '@onceflow/core';

/** One envelope the inbox keeps, with its record's state. */
export interface StoredEvent {
  readonly envelope: Envelope;
  readonly state: EventState;
}

/** A filter over stored events. Bounds apply to `envelope.receivedAt`. */
export interface InboxQuery {
  /** Received at or after this instant. */
  readonly since?: Date | undefined;
  /** Received strictly before this instant. */
  readonly until?: Date | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  /** Only records in these states; every state when omitted. */
  readonly states?: readonly EventState[] | undefined;
}

/** One page of stored events. */
export interface InboxPage {
  readonly events: readonly StoredEvent[];
  /** Opaque; pass it as `after` to read the next page. Absent on the last page. */
  readonly next?: string | undefined;
}

/**
 * Read-only access to the envelopes an inbox stores, by the time it received them, for operators
 * (replay, retention dry runs). An optional ability beside the `Inbox` contract: a store that
 * does not keep envelopes once enqueued (Redis) does not offer it, and the commands that need it
 * say so.
 *
 * `list` returns the records whose envelope the store kept, in the order the inbox received them
 * (ties broken by source, then id), at most `limit`, continuing after the cursor `after` (keyset
 * paging: stable while rows are added or purged). `count` counts every matching record, with or
 * without its envelope (what `Inbox.purge` would delete). Time bounds apply to the time the inbox
 * recorded the event. Neither changes a row; both are safe beside a running receiver and workers.
 */
export interface InboxBrowser {
  list(
    query: InboxQuery & { readonly limit: number; readonly after?: string | undefined },
  ): Promise<InboxPage>;
  count(query: InboxQuery): Promise<number>;
}
