import type { Delivery } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { LockLostError } from '../errors.js';
import { eventLogFields } from '../observability/event-fields.js';
import type { Logger } from '../observability/logger.js';
import type { EventHandler } from './handler.js';
import { markLockLost } from './lock.js';

/**
 * One delivery on its way through the worker's middleware. Created per delivery, touched by one
 * async flow only (no locking needed); middleware record what later steps need on it.
 */
export interface Job {
  readonly delivery: Delivery;
  readonly envelope: Envelope;
  readonly attempt: number;
  /** The handler registered for `envelope.type`, if any. */
  readonly handler: EventHandler | undefined;
  /** Child logger carrying the event's log fields (`eventLogFields`: source, id, type, attempt, traceId). */
  readonly log: Logger;
  /** Aborted on lock loss, processing-lease loss, or shutdown after the drain limit. */
  readonly abort: AbortController;
  /**
   * Why `abort` fired, once it has; set before `abort.abort()` is called, so check it rather than
   * `abort.signal` (Node creates the signal on first read). `shutdown` makes an interrupted
   * failure a free retry.
   */
  abortedBy: 'lock-lost' | 'shutdown' | undefined;
  /** The processed-guard's lease, once acquired. */
  lease: { readonly token: string } | undefined;
  /** Until when (per the worker's clock) the transport lock is known to be held. */
  lockUntil: number;
  /**
   * When (per the worker's clock) the job started or last renewed its lease or lock: a running
   * job that renewed nothing for longer than the lock is stalled (see `Worker.status`).
   */
  renewedAt: number;
  /** Handler run time in ms, once the handler has been called. */
  handlerMs: number | undefined;
  /** What the handler said with `ctx.note`: the completed history entry's note. */
  note: string | undefined;
}

/**
 * Creates the job for one delivery: its child logger, and its abort controller, wired to the
 * delivery's own signal (lock loss reported by the transport). Call `dispose` when it is settled.
 */
export function createJob(
  delivery: Delivery,
  handler: EventHandler | undefined,
  logger: Logger,
  lockUntil: number,
  lockMs: number,
): { readonly job: Job; dispose(): void } {
  const { envelope } = delivery;
  const job: Job = {
    delivery,
    envelope,
    attempt: delivery.attempt,
    handler,
    log: logger.child({ ...eventLogFields(envelope, delivery.attempt) }),
    abort: new AbortController(),
    abortedBy: undefined,
    lease: undefined,
    lockUntil,
    renewedAt: lockUntil - lockMs,
    handlerMs: undefined,
    note: undefined,
  };
  const onLost = () => {
    const reason: unknown = delivery.signal.reason;
    markLockLost(job, reason instanceof Error ? reason : new LockLostError());
  };
  if (delivery.signal.aborted) onLost();
  else delivery.signal.addEventListener('abort', onLost, { once: true });
  return { job, dispose: () => delivery.signal.removeEventListener('abort', onLost) };
}
