import type { ErrorInfo } from '../errors.js';
import type { StoredEnvelope } from './stored-envelope.js';

/** One message as a memory queue keeps it. */
export interface StoredMessage {
  /** Publish order on this queue; a redriven message gets a new one. */
  readonly seq: number;
  /** Never handed out: each delivery gets an envelope of its own (`loadEnvelope`). */
  readonly envelope: StoredEnvelope;
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
 * key's messages run one at a time in publish order.
 */
export function* deliverable(
  messages: Iterable<StoredMessage>,
  now: number,
  orderingPerKey: boolean,
): Generator<StoredMessage, void, undefined> {
  const blocked = new Set<string>();
  for (const m of messages) {
    const key = orderingPerKey ? m.envelope.key : undefined;
    // Stryker disable next-line ConditionalExpression: `blocked` never holds undefined (the next line): equivalent
    if (key !== undefined && blocked.has(key)) continue;
    // Stryker disable next-line ConditionalExpression: an undefined key added is never looked up (the line above): equivalent
    if (key !== undefined) blocked.add(key);
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
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: a wake-up planned too early only pumps once for nothing (`deliverable` checks lock and time): equivalent
    if (m.lock !== undefined || m.availableAt <= now) continue;
    next = next === undefined ? m.availableAt : Math.min(next, m.availableAt);
  }
  return next;
}
