import { type DeadLetterReason, type Envelope, LockLostError } from '@onceflow/core';
import {
  type DeliveryInit,
  type LockWatch,
  checkExtendLock,
  checkRetryDelay,
  deadLetterHeaders,
  watchLock,
} from '@onceflow/core/kit';
import { type Job, type Queue, UnrecoverableError } from 'bullmq';
import { asTransport, isLockLoss } from './errors.js';

/** Longest `retry({ delayMs })` accepted (declared as `maxDelayMs`). */
export const MAX_DELAY_MS = 365 * 24 * 3_600_000;

/** What the dead-letter queue keeps per dead letter: the job id, the wire body, the metadata. */
export interface DeadLetterData {
  readonly jobId: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

export interface JobDeliveryDeps {
  readonly deadLetterQueue: Queue<DeadLetterData>;
  readonly lockMs: number;
  readonly maxLockMs: number;
  /** Records the job's completion (`moveToCompleted`); resolves once Redis has. */
  readonly complete: (job: Job<string>, token: string) => Promise<void>;
}

/**
 * The broker side of one active BullMQ job, for the kit's `runDelivery`. Every settlement is one
 * BullMQ script guarded by this delivery's lock token:
 * - `ack` → `moveToCompleted` (kept for the dedupe window by `removeOnComplete`), which also
 *   fetches the worker's next job (see `AdapterWorker`);
 * - `retry` → `moveToDelayed(now + delayMs)`; the next `moveToActive` raises `attemptsStarted`;
 * - `deadLetter` → add to the dead-letter queue, then `moveToFailed` (the entry is removed again
 *   when the lock turned out lost). A crash between the two leaves the entry and redelivers the
 *   job: a dead letter may then exist twice, and its redrive finds the job live and only drops it.
 * A settlement or extension after the lock was lost rejects with `LockLostError` and aborts the
 * signal. `dispose` must be called once the delivery is settled.
 */
export function jobDelivery(
  deps: JobDeliveryDeps,
  job: Job<string>,
  token: string,
  envelope: Envelope,
): DeliveryInit & { dispose(): void } {
  const what = `${job.queueName}/${job.id}`;
  // The lock was taken by `moveToActive` at `processedOn` (client time): count from there.
  const lock: LockWatch = watchLock({
    until: (job.processedOn ?? Date.now()) + deps.lockMs,
    describe: `lock on ${what}`,
  });

  const guarded = async (op: string, apply: () => Promise<unknown>): Promise<void> => {
    try {
      await asTransport(`${op} ${what}`, apply);
    } catch (err) {
      if (err instanceof LockLostError) lock.lost(`${op} found it taken`);
      throw err;
    }
  };

  const deadLetter = async (reason: DeadLetterReason): Promise<void> => {
    const data: DeadLetterData = {
      jobId: job.id ?? '',
      body: job.data,
      headers: deadLetterHeaders({
        reason: reason.reason,
        attempts: job.attemptsStarted,
        lastError: reason.error,
        deadLetteredAt: new Date().toISOString(),
      }),
    };
    // The entry's id is the job's: a job dead-lettered again (its worker died between adding the
    // entry and failing the job) finds its entry there and adds no second one.
    const entry = await asTransport('deadLetter', () =>
      deps.deadLetterQueue.add(envelope.type, data, job.id ? { jobId: job.id } : {}),
    );
    try {
      await job.moveToFailed(new UnrecoverableError(reason.reason), token, false);
    } catch (err) {
      // The job comes back after its lock expires and is dead-lettered again then.
      if (isLockLoss(err)) await entry.remove().catch(() => {});
      throw err;
    }
  };

  return {
    envelope,
    attempt: job.attemptsStarted,
    signal: lock.signal,
    async extendLock(ms) {
      checkExtendLock(ms, deps.maxLockMs);
      if (lock.signal.aborted) throw lock.signal.reason;
      const from = Date.now();
      const held = await asTransport('extendLock', () => job.extendLock(token, ms));
      if (Number(held) !== 1) {
        lock.lost('extendLock found it expired or taken');
        throw lock.signal.reason;
      }
      lock.renew(from + ms);
    },
    ack: () => guarded('ack', () => deps.complete(job, token)),
    async retry({ delayMs }) {
      checkRetryDelay(delayMs, MAX_DELAY_MS);
      await guarded('retry', () => job.moveToDelayed(Date.now() + delayMs, token));
    },
    deadLetter: (reason) => guarded('deadLetter', () => deadLetter(reason)),
    dispose: () => lock.dispose(),
  };
}
