import {
  type Envelope,
  type Logger,
  LockLostError,
  errorLogFields,
  eventLogFields,
} from '@onceflow/core';
import {
  type DeliveryInit,
  type LockWatch,
  type RetryOptions,
  type RunDeliveryOptions,
  checkRetryDelay,
  watchLock,
} from '@onceflow/core/kit';
import type { Job } from 'bullmq';
import type { DeadLetterQueue } from './dead-letter-queue.js';
import { asTransport, transportError } from './errors.js';

/** Longest `retry({ delayMs })` accepted (declared as `maxDelayMs`). */
export const MAX_DELAY_MS = 365 * 24 * 3_600_000;

export interface JobDeliveryDeps {
  /** The lock length: `lockDuration`, and what `renewLock` renews for. */
  readonly lockMs: number;
  /** Records the job's completion (`moveToCompleted`); resolves once Redis has. */
  readonly complete: (job: Job<unknown>, token: string) => Promise<void>;
  /** On the work queue: where a retry goes instead once `attempt` reached the limit. */
  readonly deadLetters?: DeadLetterQueue | undefined;
  /** Where a settlement that could not be recorded is reported (`onError`). */
  readonly logger: Logger;
  /** The BullMQ queue consumed, for the log. */
  readonly queue: string;
}

/**
 * The broker side of one active BullMQ job, for the kit's `runDelivery`. Every settlement is one
 * BullMQ script guarded by this delivery's lock token:
 * - `ack` → `moveToCompleted` (kept for the dedupe window by `removeOnComplete`), which also
 *   fetches the worker's next job (see `AdapterWorker`);
 * - `retry` → `moveToDelayed(now + delayMs)`; the next `moveToActive` raises `attemptsStarted`.
 *   On the work queue a retry of the `deliveryLimit`-th delivery moves the job to the dead-letter
 *   queue instead (two scripts, see `DeadLetterQueue.move`);
 * - `renewLock` → `extendLock(token, lockMs)`.
 * A settlement or renewal after the lock was lost, whether Redis or this process's watch found it
 * so, rejects with `LockLostError` (and aborts the signal). `dispose` must be called once the delivery is settled. The result is also the
 * `runDelivery` options: `onError` logs a settlement that could not be recorded.
 */
export function jobDelivery(
  deps: JobDeliveryDeps,
  job: Job<unknown>,
  token: string,
  read: { readonly envelope: Envelope; readonly attempt: number },
): DeliveryInit & RunDeliveryOptions & { onError(err: unknown): void; dispose(): void } {
  return new JobDelivery(deps, job, token, read);
}

/** One object per job, its methods on the prototype (called on it, as `runDelivery` does). */
class JobDelivery implements DeliveryInit, RunDeliveryOptions {
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly #deps: JobDeliveryDeps;
  readonly #job: Job<unknown>;
  readonly #token: string;
  readonly #lock: LockWatch;

  constructor(
    deps: JobDeliveryDeps,
    job: Job<unknown>,
    token: string,
    read: { readonly envelope: Envelope; readonly attempt: number },
  ) {
    this.envelope = read.envelope;
    this.attempt = read.attempt;
    this.#deps = deps;
    this.#job = job;
    this.#token = token;
    // The lock was taken by `moveToActive` at `processedOn` (client time): count from there.
    this.#lock = watchLock({
      until: (job.processedOn ?? Date.now()) + deps.lockMs,
      describe: `lock on ${job.queueName}/${job.id}`,
    });
  }

  /** Made on first read only (a handler reading `ctx.signal`); `lockLost` answers without it. */
  get signal(): AbortSignal {
    return this.#lock.signal;
  }

  lockLost(): boolean {
    return this.#lock.isLost();
  }

  async renewLock(): Promise<void> {
    const lock = this.#lock;
    if (lock.isLost()) throw lock.signal.reason;
    const { lockMs } = this.#deps;
    const from = Date.now();
    const held = await asTransport('renewLock', () => this.#job.extendLock(this.#token, lockMs));
    if (Number(held) !== 1) {
      lock.lost('renewLock found it expired or taken');
      throw lock.signal.reason;
    }
    lock.renew(from + lockMs);
  }

  ack(): Promise<void> {
    // Redis may still hold a lock this process already counted lost (its expiry runs from when
    // the script ran, ours from `processedOn`): the handler was told, so the settlement is refused
    // (thrown: `runDelivery`'s settlement turns it into a rejection).
    this.#lock.assertHeld('ack');
    return guarded(this.#lock, this.#job, 'ack', this.#deps.complete(this.#job, this.#token));
  }

  async retry({ delayMs, error }: RetryOptions): Promise<void> {
    checkRetryDelay(delayMs, MAX_DELAY_MS);
    this.#lock.assertHeld('retry');
    const { deadLetters } = this.#deps;
    const job = this.#job;
    if (deadLetters && this.attempt >= deadLetters.limit) {
      const fields = { attempts: this.attempt, lastError: error };
      return guarded(this.#lock, job, 'retry', deadLetters.move(job, this.#token, fields));
    }
    const delayed = job.moveToDelayed(Date.now() + delayMs, this.#token);
    return guarded(this.#lock, job, 'retry', delayed);
  }

  onError(err: unknown): void {
    this.#deps.logger.warn(
      {
        ...eventLogFields(this.envelope, this.attempt),
        ...errorLogFields(err),
        queue: this.#deps.queue,
      },
      'settlement not recorded',
    );
  }

  dispose(): void {
    this.#lock.dispose();
  }
}

/**
 * One settlement's script, already sent (`applied`, an async call: it rejects, never throws):
 * a lost lock rejects with `LockLostError` and marks the lock lost, any other failure with
 * `TransportUnavailableError` (see `asTransport`).
 */
async function guarded(
  lock: LockWatch,
  job: Job<unknown>,
  op: 'ack' | 'retry',
  applied: Promise<unknown>,
): Promise<void> {
  try {
    await applied;
  } catch (cause) {
    const err = transportError(`${op} ${job.queueName}/${job.id}`, cause);
    if (err instanceof LockLostError) lock.lost(`${op} found it taken`);
    throw err;
  }
}
