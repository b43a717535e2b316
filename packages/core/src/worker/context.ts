import type { Envelope } from '../envelope.js';
import type { Logger } from '../observability/logger.js';
import { deriveIdempotencyKey } from './idempotency-key.js';
import { type LockDeps, renewLease, renewTransportLock } from './lock.js';
import type { Job } from './job.js';

/**
 * What a handler gets besides the event, and what each step of `WorkerConfig.middleware` gets.
 * One per delivery; do not keep it after `handle` returns.
 */
export interface HandlerContext {
  readonly envelope: Envelope;
  /** 1 on the first delivery; every redelivery adds one (retries, busy retries, lock expiry). */
  readonly attempt: number;
  /**
   * Aborted when this attempt should stop: its transport lock or processing lease was lost
   * (reason: `LockLostError`; another attempt may now run the event), or the worker is shutting
   * down and `shutdownTimeoutMs` has passed. Pass it to fetch, database drivers, timers.
   */
  readonly signal: AbortSignal;
  /**
   * A key for one downstream side effect, the same on every redelivery of this event (derived from
   * source, event id and `action`): use it as Stripe's `Idempotency-Key` or any API's equivalent.
   */
  idempotencyKey(action: string): string;
  /**
   * Renews the transport lock (where the delivery can: `RenewableDelivery`) and the processing
   * lease, each for the transport's `lock.ms` from now. Rejects with `LockLostError` if either is
   * already lost. Rarely needed: the worker's heartbeat keeps both alive while the handler runs.
   */
  renewLock(): Promise<void>;
  /** Logger carrying the event's source, id, type, attempt and trace id (`eventLogFields`). */
  readonly log: Logger;
  /**
   * The token of this attempt's processing lease in the worker's processed store. Read by the
   * same-transaction marks (`markProcessed(client, ctx, …)` in `@onceflow/inbox-postgres`,
   * `markProcessedInTransaction(db, ctx)` in `@onceflow/embedded`), which hold only while this
   * attempt owns the lease: pass them `ctx` rather than copying it.
   */
  readonly processingToken: string;
  /**
   * Notes why this attempt completes as it does (`stale: version 5 ≤ 7 applied`): when the handler
   * returns, the worker completes the event's record with this note on its `completed` history
   * entry. The last call wins; a handler that throws records no note. A record already completed
   * inside the handler's transaction (`markProcessed`) keeps that entry instead.
   */
  note(text: string): void;
}

/**
 * Hands `target` to a subclass as its `this` (a constructor that returns an object makes `new`
 * answer that object), so the subclass's private fields are added to a plain object.
 */
class OnPlainObject {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning `target` is what this class is for
    return target;
  }
}

/** A context's job, in a private field: not enumerable, not copied by `{ ...ctx }`. */
class ContextJob extends OnPlainObject {
  readonly #job: Job;

  private constructor(target: object, job: Job) {
    super(target);
    this.#job = job;
  }

  /** `target`, now carrying `job`. */
  static attach<T extends object>(target: T, job: Job): T {
    return new ContextJob(target, job) as unknown as T;
  }

  /** The job of `ctx`, or of the context it derives from (`Object.create(ctx)`). */
  static of(ctx: object): Job | undefined {
    for (let o: object | null = ctx; o !== null; o = Object.getPrototypeOf(o)) {
      if (#job in o) return (o as ContextJob).#job;
    }
    return undefined;
  }
}

/**
 * `signal`, the same getter on every context: V8 keeps objects whose accessor is one function on
 * one hidden class, where a getter made per object turns each object into a dictionary. A getter
 * because Node creates an AbortController's signal on first read, which costs more than the rest
 * of the context together; most handlers never read it.
 */
const signalProperty: PropertyDescriptor = {
  get(this: object) {
    return ContextJob.of(this)?.abort.signal;
  },
  enumerable: true,
  configurable: true,
};

type Building = { -readonly [K in keyof HandlerContext]?: HandlerContext[K] };

/** Builds the context for a job that holds its processing lease. */
export function createHandlerContext(job: Job, deps: LockDeps): HandlerContext {
  const { envelope } = job;
  const ctx: Building = ContextJob.attach({ envelope, attempt: job.attempt }, job);
  Object.defineProperty(ctx, 'signal', signalProperty);
  ctx.idempotencyKey = (action) => deriveIdempotencyKey(envelope, action);
  ctx.renewLock = async () => {
    await Promise.all([renewTransportLock(job, deps), renewLease(job, deps)]);
  };
  ctx.log = job.log;
  ctx.processingToken = job.lease?.token ?? '';
  ctx.note = (text) => {
    job.note = String(text);
  };
  return ctx as HandlerContext;
}
