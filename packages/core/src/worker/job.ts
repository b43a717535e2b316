import type { Delivery } from '../contracts/transport.js';
import type { Envelope } from '../envelope.js';
import { LockLostError } from '../errors.js';
import { eventLogFields } from '../observability/event-fields.js';
import { type Logger, silentLogger } from '../observability/logger.js';
import type { EventHandler } from './handler.js';

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

/** `addEventListener` options: the delivery's signal aborts once. */
const ONCE = { once: true } as const;

/**
 * A job that asks its delivery whether its lock is lost (`Delivery.lockLost`, else its signal)
 * when its own state is read, and listens to the delivery's signal (itself, `handleEvent`: no
 * listener closure) only once its own abort controller exists, created on first read (a handler
 * read `ctx.signal`): a delivery whose handler never reads it makes no signal at all. Until then nothing can observe the abort but `abortedBy`, which checks the delivery's
 * signal first; so lock loss reads the same as with a listener from the start.
 */
class DeliveryJob implements Job {
  readonly delivery: Delivery;
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly handler: EventHandler | undefined;
  readonly log: Logger;
  lease: Job['lease'] = undefined;
  lockUntil: number;
  renewedAt: number;
  handlerMs: number | undefined = undefined;
  note: string | undefined = undefined;
  #abortedBy: Job['abortedBy'] = undefined;
  #abort: AbortController | undefined;
  #listening = false;

  constructor(
    delivery: Delivery,
    handler: EventHandler | undefined,
    log: Logger,
    lockUntil: number,
    lockMs: number,
  ) {
    this.delivery = delivery;
    this.envelope = delivery.envelope;
    this.attempt = delivery.attempt;
    this.handler = handler;
    this.log = log;
    this.lockUntil = lockUntil;
    this.renewedAt = lockUntil - lockMs;
  }

  get abortedBy(): Job['abortedBy'] {
    if (this.#abortedBy === undefined && lockLost(this.delivery)) this.handleEvent();
    return this.#abortedBy;
  }

  set abortedBy(cause: Job['abortedBy']) {
    this.#abortedBy = cause;
  }

  get abort(): AbortController {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.abortedBy === undefined) {
        this.delivery.signal.addEventListener('abort', this, ONCE);
        this.#listening = true;
      }
    }
    return this.#abort;
  }

  /** The delivery's signal aborted: its lock is lost (unless the job was aborted before). */
  handleEvent(): void {
    if (this.#abortedBy !== undefined) return;
    const reason: unknown = this.delivery.signal.reason;
    this.#abortedBy = 'lock-lost';
    this.abort.abort(reason instanceof Error ? reason : new LockLostError());
  }

  dispose(): void {
    if (this.#listening) this.delivery.signal.removeEventListener('abort', this);
  }
}

/** The delivery's lock is lost: asked without making its signal where the transport can. */
const lockLost = (d: Delivery): boolean =>
  typeof d.lockLost === 'function' ? d.lockLost() : d.signal.aborted;

/**
 * Creates the job for one delivery: its child logger, and its abort controller, wired to the
 * delivery's own signal (lock loss reported by the transport aborts the job). Call `dispose` when
 * it is settled.
 */
export function createJob(
  delivery: Delivery,
  handler: EventHandler | undefined,
  logger: Logger,
  lockUntil: number,
  lockMs: number,
): Job & { dispose(): void } {
  // The silent logger's child is itself: no fields to build for it.
  const log =
    logger === silentLogger
      ? silentLogger
      : logger.child(eventLogFields(delivery.envelope, delivery.attempt) as unknown as Bindings);
  return new DeliveryJob(delivery, handler, log, lockUntil, lockMs);
}

/** The fields object itself, fresh per call: `EventLogFields` is an interface, without an index signature. */
type Bindings = Parameters<Logger['child']>[0];
