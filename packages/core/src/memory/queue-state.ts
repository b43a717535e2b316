import type { StoredEnvelope } from './stored-envelope.js';

/** One message as a memory queue keeps it. */
export interface StoredMessage {
  /** Never handed out: each delivery gets an envelope of its own (`loadEnvelope`). */
  readonly envelope: StoredEnvelope;
  /** The attempt number its next delivery will have. */
  attempt: number;
  /** Not deliverable before this time (epoch ms). */
  availableAt: number;
}

/** A delivery's hold on a message; replaced on every delivery, so stale holders can tell. */
export interface MessageLock {
  /** Lost at this time (epoch ms) unless renewed. */
  until: number;
  readonly controller: AbortController;
}

/**
 * Picks the deliverable messages in publish order: not held by a delivery and due. With
 * `orderingPerKey`, a message whose key has an earlier message still queued (held, delayed or
 * waiting) is not deliverable, so one key's messages run one at a time in publish order.
 */
export function* deliverable(
  messages: Iterable<StoredMessage>,
  locks: ReadonlyMap<StoredMessage, MessageLock>,
  now: number,
  orderingPerKey: boolean,
): Generator<StoredMessage, void, undefined> {
  const blocked = new Set<string>();
  for (const m of messages) {
    const key = orderingPerKey ? m.envelope.key : undefined;
    if (key !== undefined) {
      if (blocked.has(key)) continue;
      blocked.add(key);
    }
    if (!locks.has(m) && m.availableAt <= now) yield m;
  }
}

/**
 * The earliest of `from` and the times after `now` at which a delayed message becomes due. A held message was due
 * when it was delivered, so only delayed ones count: a due message waiting for its key plans
 * nothing (its predecessor's settlement or lock end runs the queue again).
 */
export function nextDueAt(
  messages: Iterable<StoredMessage>,
  now: number,
  from: number | undefined,
): number | undefined {
  let next = from;
  for (const m of messages) {
    if (m.availableAt > now) next = Math.min(next ?? m.availableAt, m.availableAt);
  }
  return next;
}
