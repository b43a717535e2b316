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
  type RunDeliveryOptions,
  brokerError,
  checkRetryDelay,
  watchLock,
} from '@onceflow/core/kit';
import type { Job } from 'bullmq';
import type { DeadLetterQueue } from './dead-letter-queue.js';
import { asTransport, isLockLoss } from './errors.js';

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
 * A settlement or renewal after the lock was lost rejects with `LockLostError` and aborts the
 * signal. `dispose` must be called once the delivery is settled. The result is also the
 * `runDelivery` options: `onError` logs a settlement that could not be recorded.
 */
export function jobDelivery(
  deps: JobDeliveryDeps,
  job: Job<unknown>,
  token: string,
  read: { readonly envelope: Envelope; readonly attempt: number },
): DeliveryInit & RunDeliveryOptions & { onError(err: unknown): void; dispose(): void } {
  const { lockMs, deadLetters } = deps;
  // The lock was taken by `moveToActive` at `processedOn` (client time): count from there.
  const lock: LockWatch = watchLock({
    until: (job.processedOn ?? Date.now()) + lockMs,
    describe: `lock on ${job.queueName}/${job.id}`,
  });
  // Methods, not closures: one object per job on the hot path.
  return {
    envelope: read.envelope,
    attempt: read.attempt,
    signal: lock.signal,
    async renewLock() {
      if (lock.signal.aborted) throw lock.signal.reason;
      const from = Date.now();
      const held = await asTransport('renewLock', () => job.extendLock(token, lockMs));
      if (Number(held) !== 1) {
        lock.lost('renewLock found it expired or taken');
        throw lock.signal.reason;
      }
      lock.renew(from + lockMs);
    },
    ack() {
      return guarded(lock, job, 'ack', deps.complete(job, token));
    },
    async retry({ delayMs, error }) {
      checkRetryDelay(delayMs, MAX_DELAY_MS);
      if (deadLetters && read.attempt >= deadLetters.limit) {
        const fields = { attempts: read.attempt, lastError: error };
        return guarded(lock, job, 'retry', deadLetters.move(job, token, fields));
      }
      return guarded(lock, job, 'retry', job.moveToDelayed(Date.now() + delayMs, token));
    },
    onError(err) {
      deps.logger.warn(
        {
          ...eventLogFields(read.envelope, read.attempt),
          ...errorLogFields(err),
          queue: deps.queue,
        },
        'settlement not recorded',
      );
    },
    dispose() {
      lock.dispose();
    },
  };
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
    const err = brokerError(`bullmq ${op} ${job.queueName}/${job.id}`, cause, {
      lockLost: isLockLoss,
    });
    if (err instanceof LockLostError) lock.lost(`${op} found it taken`);
    throw err;
  }
}
