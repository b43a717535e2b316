import type { ErrorInfo } from '../errors.js';

/** One message as a memory queue keeps it: the wire-format body, never a shared object. */
export interface StoredMessage {
  /** Publish order on this queue; a redriven message gets a new one. */
  readonly seq: number;
  readonly body: string;
  readonly key: string | undefined;
  /** The attempt number its next delivery will have. */
  attempt: number;
  /** Not deliverable before this time (epoch ms). */
  availableAt: number;
  lastError: ErrorInfo | undefined;
  lock: MessageLock | undefined;
}

/** A delivery's hold on a message; replaced on every delivery, so stale holders can tell. */
export interface MessageLock {
  until: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  readonly controller: AbortController;
}

/**
 * Picks the deliverable messages in publish order. With `orderingPerKey`, a message whose key
 * has an earlier message still queued (locked, delayed or waiting) is not deliverable, so one
 * key's messages run one at a time in publish order. Also returns the earliest future
 * `availableAt` among unlocked messages, for the wake-up timer.
 */
export function* deliverable(
  messages: Iterable<StoredMessage>,
  now: number,
  orderingPerKey: boolean,
): Generator<StoredMessage, void, undefined> {
  const blocked = new Set<string>();
  for (const m of messages) {
    const keyed = orderingPerKey && m.key !== undefined;
    if (keyed && blocked.has(m.key as string)) continue;
    if (keyed) blocked.add(m.key as string);
    if (m.lock === undefined && m.availableAt <= now) yield m;
  }
}

/** The earliest time an unlocked, delayed message becomes deliverable, if any. */
export function nextAvailableAt(
  messages: Iterable<StoredMessage>,
  now: number,
): number | undefined {
  let next: number | undefined;
  for (const m of messages) {
    if (m.lock !== undefined || m.availableAt <= now) continue;
    next = next === undefined ? m.availableAt : Math.min(next, m.availableAt);
  }
  return next;
}
