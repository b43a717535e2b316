import type { Envelope } from '../envelope.js';
import type { ErrorInfo } from '../errors.js';

/**
 * Where an event is in its life. The store that claims an event keeps one record per
 * (source, id); the worker, the CLI, the console and the metrics read it, none browses a broker.
 *
 * ```
 * received ─▶ enqueued ─▶ processing ─▶ completed
 *                ▲           │  ▲ └──▶ retry-scheduled ─┘
 *                │           └──▶ dead-lettered ─▶ discarded
 *                └─────── redriven ──────┘
 * ```
 * - `received`: a receiver claimed it and has not yet enqueued it (the relay re-publishes these).
 * - `enqueued`: durably on the broker (after the receiver's publish, or an operator's redrive).
 * - `processing`: an attempt holds the processing lease.
 * - `retry-scheduled`: the last attempt failed; the transport delivers it again at `nextAttemptAt`.
 * - `completed`: handled. Later deliveries are acked without running the handler.
 * - `dead-lettered`: will not be tried again until an operator redrives it; the envelope is kept.
 * - `discarded`: an operator purged the dead letter; kept for dedupe and audit until retention.
 */
export type EventState =
  | 'received'
  | 'enqueued'
  | 'processing'
  | 'retry-scheduled'
  | 'completed'
  | 'dead-lettered'
  | 'discarded';

/** Every state, in the order of an event's life. */
export const EVENT_STATES: readonly EventState[] = [
  'received',
  'enqueued',
  'processing',
  'retry-scheduled',
  'completed',
  'dead-lettered',
  'discarded',
];

/**
 * Whether `value` is one of the record's states (a filter from a command line or a query string).
 *
 * @example
 * if (!isEventState(flag)) throw new Error(`not a state: ${flag}`);
 */
export function isEventState(value: unknown): value is EventState {
  return EVENT_STATES.includes(value as EventState);
}

/** One state change in a record's history. */
export interface HistoryEntry {
  /** ISO-8601. */
  readonly at: string;
  /** The state entered. */
  readonly state: EventState;
  /** The delivery attempt it concerns, if any. */
  readonly attempt?: number | undefined;
  /** The error code that caused it, if any. */
  readonly code?: string | undefined;
  /** Who acted: a worker's consumer name, `receiver`, `relay`, or an operator (`cli:alice`). */
  readonly actor?: string | undefined;
  /** `redriven`, `broker dead-letter`, … when the state alone does not say it. */
  readonly note?: string | undefined;
}

/** The most history entries a record keeps: the oldest are dropped first. */
export const HISTORY_LIMIT = 20;

/** An event's record, as operators read it. */
export interface EventRecord {
  readonly source: string;
  readonly id: string;
  readonly type?: string | undefined;
  readonly key?: string | undefined;
  readonly state: EventState;
  /** The highest delivery attempt started in the current run (a redrive starts again at 1). */
  readonly attempts: number;
  /** When `retry-scheduled`: when the transport delivers it again (ISO-8601). */
  readonly nextAttemptAt?: string | undefined;
  readonly lastError?: ErrorInfo | undefined;
  /** When `dead-lettered` (or later `discarded`): why. */
  readonly reason?: string | undefined;
  /** The consumer that ran the last attempt. */
  readonly consumer?: string | undefined;
  /** The W3C trace id from the envelope's `traceparent` header, when it had one. */
  readonly traceId?: string | undefined;
  /** ISO-8601: the envelope's `receivedAt`, else the first write. */
  readonly receivedAt: string;
  /** ISO-8601: the last state change. */
  readonly updatedAt: string;
  /** Oldest first, at most `HISTORY_LIMIT` entries. */
  readonly history: readonly HistoryEntry[];
}

/**
 * `RecordStore.begin` answers:
 * - `acquired`: run the handler, then `complete`, `scheduleRetry`, `deadLetter` or `release`;
 * - `processed`: completed (or discarded) before: ack without running the handler;
 * - `dead-lettered`: the record already holds this event as a dead letter: ack the broker's copy;
 * - `busy`: another attempt holds a live processing lease: retry after `retryAfterMs`.
 */
export type BeginResult =
  | { readonly status: 'acquired'; readonly token: string }
  | { readonly status: 'processed' }
  | { readonly status: 'dead-lettered' }
  | { readonly status: 'busy'; readonly retryAfterMs: number };

export interface BeginOptions {
  readonly leaseMs: number;
  /** The delivery's attempt: recorded as `attempts`. */
  readonly attempt: number;
  /** Recorded as `consumer` and as the history entry's actor. */
  readonly consumer?: string | undefined;
  /**
   * Set when the delivery is an operator's redrive of a dead letter (the envelope's
   * `x-onceflow-redrive` header): who redrove it. A `dead-lettered` record is then acquired,
   * and the history says `redriven by <actor>`.
   */
  readonly redrive?: string | undefined;
}

/** What `complete` records besides the state. */
export interface CompleteOptions {
  /** The completed history entry's note; stores keep at most `NOTE_LIMIT` characters. */
  readonly note?: string | undefined;
}

/** The longest note a history entry keeps: longer ones are cut, ending in `…`. */
export const NOTE_LIMIT = 500;

/** What `deadLetter` records. */
export interface DeadLetterFields {
  /** Short human text: `attempts exhausted`, `schema: amount must be a number`, … */
  readonly reason: string;
  readonly error?: ErrorInfo | undefined;
  readonly attempts: number;
  readonly actor?: string | undefined;
  readonly note?: string | undefined;
}

/** Filters for `list` and `count`. Every field narrows the result. */
export interface RecordFilter {
  readonly state?: EventState | undefined;
  readonly source?: string | undefined;
  readonly type?: string | undefined;
  /** Records whose `reason` contains this text. */
  readonly reason?: string | undefined;
  /** Last state change before this instant (older than). */
  readonly updatedBefore?: Date | undefined;
  /** Last state change at or after this instant. */
  readonly updatedAfter?: Date | undefined;
}

/**
 * The largest page `RecordStore.list` serves: every store refuses a `limit` above it (or below
 * 1, or not an integer) with `UsageError`. Page on with `RecordPage.next` for more.
 */
export const RECORD_PAGE_LIMIT = 1000;

export interface RecordQuery extends RecordFilter {
  /** Page size: an integer from 1 to `RECORD_PAGE_LIMIT` (1000); `UsageError` otherwise. */
  readonly limit: number;
  /** `RecordPage.next` of the previous page. */
  readonly cursor?: string | undefined;
}

/** Oldest `updatedAt` first, ties by (source, id). `next` is absent on the last page. */
export interface RecordPage {
  readonly records: readonly EventRecord[];
  readonly next?: string | undefined;
}

/** An operator's action on a dead letter, recorded with who did it. */
export interface RecordAction {
  /** `redriven`: the caller has published a copy (→ `enqueued`); `discarded`: purged. */
  readonly kind: 'redriven' | 'discarded';
  readonly actor: string;
}

/**
 * The event record: the worker's processed-guard and the system of record for an event's life.
 * Stores usually implement it and `Inbox` on one row per (source, id), so the receiver's claim
 * and the worker's attempts land on the same record.
 *
 * Concurrency: `begin` is an atomic lease (of any number of concurrent calls one acquires); the
 * other writes act only while their `token` owns the lease and are no-ops otherwise. Each write
 * appends one history entry in the same statement. Round trips per delivery: `begin` and
 * `complete` (or `scheduleRetry` / `deadLetter`), one each.
 */
export interface RecordStore {
  /**
   * Takes the processing lease. Creates the record from the envelope at first delivery (events
   * that never passed a receiver), then: state `processing`, `attempts` = `attempt`.
   */
  begin(envelope: Envelope, options: BeginOptions): Promise<BeginResult>;
  /** Renews the lease; false once `token` no longer owns it. */
  extend(source: string, id: string, token: string, leaseMs: number): Promise<boolean>;
  /**
   * `processing` → `completed`. Idempotent. `options.note`, when given, is the completed history
   * entry's `note` (why the handler completed without its usual effect: `stale: version 5 ≤ 7`).
   */
  complete(
    source: string,
    id: string,
    token: string,
    options?: CompleteOptions | undefined,
  ): Promise<void>;
  /** Gives up the lease unused (shutdown, a busy retry): back to `enqueued`. */
  release(source: string, id: string, token: string): Promise<void>;
  /** The attempt failed: `retry-scheduled`, keeping `lastError` and `nextAttemptAt`; frees the lease. */
  scheduleRetry(
    source: string,
    id: string,
    token: string,
    retry: { readonly error?: ErrorInfo | undefined; readonly nextAttemptAt: Date },
  ): Promise<void>;
  /**
   * → `dead-lettered`, keeping the envelope for a redrive. `token` is the lease when the worker
   * holds one, else undefined (a broker's dead letter, an undecodable message). Idempotent; never
   * turns a `completed` record into a dead letter.
   */
  deadLetter(
    envelope: Envelope,
    token: string | undefined,
    fields: DeadLetterFields,
  ): Promise<void>;
  /** The record, with its stored envelope when the store still has it (dead letters always). */
  get(
    source: string,
    id: string,
  ): Promise<(EventRecord & { readonly envelope?: Envelope | undefined }) | undefined>;
  /**
   * One page, oldest `updatedAt` first. Rejects with `UsageError` when `query.limit` is not an
   * integer from 1 to `RECORD_PAGE_LIMIT`, or `query.cursor` is not a `next` of a page.
   */
  list(query: RecordQuery): Promise<RecordPage>;
  count(filter: RecordFilter): Promise<number>;
  /** An operator's action on a `dead-lettered` record; false (nothing changed) on any other state. */
  act(source: string, id: string, action: RecordAction): Promise<boolean>;
}
