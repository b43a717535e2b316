import type { Envelope, ErrorInfo } from '@onceflow/core';
import { deadLetterHeaders, decodeDelivery, readDeadLetterHeaders } from '@onceflow/core/kit';
import { type Job, type JobsOptions, type Queue, UnrecoverableError } from 'bullmq';
import { asTransport } from './errors.js';

/** What the dead-letter queue keeps per message: the work job's id, its body, the kit's dead-letter headers. */
export interface DeadLetterData {
  readonly jobId: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** Where work jobs go past `deliveryLimit`: the broker's own dead-letter destination. */
export interface DeadLetterQueue {
  /** Deliveries after which a job moves here instead of being delivered again. */
  readonly limit: number;
  /**
   * Moves an active work job here: adds the entry, its job id the work job's (a second move of
   * the same job adds none while the entry is kept), then fails the work job under its lock token
   * (kept in the failed set for the dedupe window, so a re-publish of its key stays ignored). Two
   * scripts: if the process dies in between, or the lock turns out lost, the entry stays and the
   * job comes back past the limit and is moved again, finding its entry. Nothing is lost; the
   * event record takes a dead letter twice as once.
   */
  move(
    job: Job<unknown>,
    token: string,
    fields: { readonly attempts: number; readonly lastError?: ErrorInfo | undefined },
  ): Promise<void>;
}

/** A job's body as published: the wire string (a job added by other code may hold any JSON). */
export const bodyOf = (data: unknown): string =>
  typeof data === 'string' ? data : JSON.stringify(data ?? null);

/** @example const dead = createDeadLetterQueue(queue, { limit: 20, jobOptions }); */
export function createDeadLetterQueue(
  queue: Queue<DeadLetterData>,
  options: { readonly limit: number; readonly jobOptions: JobsOptions },
): DeadLetterQueue {
  const { limit, jobOptions } = options;
  const reason = `delivery limit (${limit}) exceeded`;
  return {
    limit,
    move: (job, token, { attempts, lastError }) =>
      asTransport(`dead-letter ${job.queueName}/${job.id}`, async () => {
        const jobId = job.id ?? '';
        const headers = deadLetterHeaders({
          reason,
          attempts,
          lastError,
          deadLetteredAt: new Date().toISOString(),
        });
        const data: DeadLetterData = { jobId, body: bodyOf(job.data), headers };
        await queue.add(job.name, data, { ...jobOptions, jobId });
        await job.moveToFailed(new UnrecoverableError(reason), token, false);
      }),
  };
}

/**
 * A dead-letter job as a delivery: the envelope it was published with (`decodeDelivery`: an
 * undecodable body stays undecodable) and, as `attempt`, the deliveries it had on the work queue,
 * plus one for each redelivery from the dead-letter queue.
 */
export function readDeadLetter(job: Job<unknown>): { envelope: Envelope; attempt: number } {
  const data = (job.data ?? {}) as Partial<DeadLetterData>;
  const body = typeof data.body === 'string' ? data.body : bodyOf(job.data);
  const { attempts } = readDeadLetterHeaders(data.headers ?? {}, '');
  return {
    envelope: decodeDelivery(body),
    attempt: Math.max(1, attempts + job.attemptsStarted - 1),
  };
}
