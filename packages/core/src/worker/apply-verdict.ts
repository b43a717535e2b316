import type { RecordStore } from '../contracts/records.js';
import { isOnceflowError } from '../errors.js';
import { errorLogFields } from '../observability/event-fields.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import type { Job } from './job.js';
import type { Verdict } from './verdict.js';

/** What applying a verdict needs besides the job. */
export interface VerdictDeps {
  readonly records: RecordStore;
  readonly metrics: OnceflowMetrics | undefined;
  readonly consumer: string;
  readonly now: () => number;
  /** Delay before the broker offers a message again when the record could not be written. */
  readonly recordRetryMs: number;
}

/**
 * Applies a verdict: first to the event record, then to the broker, then counts it and logs one
 * line. The record is written before the broker is told, so a crash in between is harmless: the
 * broker delivers the message again and the record answers `processed` or `dead-lettered`.
 *
 * - ack: the lease is completed (a failed `complete` is logged; the delivery is still acked:
 *   running the handler again is the worse outcome), then `delivery.ack()`;
 * - retry: the record becomes `retry-scheduled` (a failure, or `RetryLaterError`) or the lease
 *   is released (shutdown), then `delivery.retry()`;
 * - dead-letter: `records.deadLetter()` keeps the envelope, reason and last error, then the
 *   message is acked. If the record cannot be written the message is not acked but retried
 *   after `recordRetryMs`, so the broker keeps it (and, past its `deliveryLimit`, moves it to its
 *   own dead-letter destination, which the worker records once the store answers again).
 *
 * A settlement the transport refuses (lock lost, broker down) is logged as such; the message
 * then returns to the broker and is decided again.
 */
export async function applyVerdict(job: Job, verdict: Verdict, deps: VerdictDeps): Promise<void> {
  const { delivery, envelope, log } = job;
  const { records, metrics } = deps;
  const { source, id } = envelope;
  const token = job.lease?.token;
  try {
    if (verdict.action === 'ack') {
      const completing = completeRecord(job, verdict, records);
      if (completing !== undefined) {
        try {
          await completing;
        } catch (err) {
          recordFailed(job, 'complete', err);
        }
      }
      await delivery.ack();
    } else if (verdict.action === 'retry') {
      if (token !== undefined) {
        const scheduled = verdict.failure || verdict.code === 'RETRY_LATER';
        const nextAttemptAt = new Date(deps.now() + verdict.delayMs);
        try {
          await (scheduled
            ? records.scheduleRetry(source, id, token, { error: verdict.error, nextAttemptAt })
            : records.release(source, id, token));
        } catch (err) {
          recordFailed(job, 'release', err);
        }
      }
      await delivery.retry({ delayMs: verdict.delayMs, error: verdict.error });
    } else {
      try {
        await records.deadLetter(envelope, token, {
          reason: verdict.reason,
          error: verdict.error,
          attempts: job.attempt,
          actor: deps.consumer,
        });
      } catch (err) {
        log.error(
          errorLogFields(err),
          'could not record the dead letter: the broker keeps the message',
        );
        await delivery.retry({ delayMs: deps.recordRetryMs, error: verdict.error });
        return;
      }
      await delivery.ack();
    }
  } catch (err) {
    settlementRefused(job, verdict, err);
    return;
  }
  report(job, verdict, metrics);
}

/**
 * `applyVerdict`'s ack, as steps a caller awaits itself (the planned attempt of an untraced
 * delivery: one async call fewer per delivery). In this order: await `completeRecord` (a failure
 * goes to `recordFailed(job, 'complete', err)`), then `delivery.ack()` (a failure goes to
 * `settlementRefused`, and nothing is reported), then `report`.
 */
export function completeRecord(
  job: Job,
  verdict: Verdict & { action: 'ack' },
  records: RecordStore,
): Promise<void> | undefined {
  const token = job.lease?.token;
  if (token === undefined || verdict.why === 'ignored') return undefined;
  return records.complete(job.envelope.source, job.envelope.id, token, { note: job.note });
}

/** Logs a settlement the transport refused: the message returns to the broker. */
export function settlementRefused(job: Job, verdict: Verdict, err: unknown): void {
  const lost = isOnceflowError(err, 'LOCK_LOST');
  const msg = `could not ${verdict.action}: the transport will deliver it again`;
  const fields = { ...errorLogFields(err), outcome: verdict };
  if (lost) job.log.warn(fields, `${msg} (lock lost)`);
  else job.log.error(fields, msg);
}

/** Logs an event record write that failed: the delivery is settled all the same. */
export function recordFailed(job: Job, op: string, err: unknown): void {
  job.log.warn(errorLogFields(err), `event record ${op} failed; the processing lease will expire`);
}

/** One count and one log line per applied verdict. */
export function report(job: Job, verdict: Verdict, metrics: OnceflowMetrics | undefined): void {
  const { envelope, log } = job;
  const type = envelope.type;
  const label = verdict.action === 'ack' ? verdict.why : verdict.action;
  if (job.handlerMs !== undefined) {
    metrics?.handlerDuration.observe({ type, outcome: label }, job.handlerMs / 1000);
  }
  const durationMs = job.handlerMs;
  switch (verdict.action) {
    case 'ack':
      if (verdict.why === 'processed') {
        metrics?.processed.inc({ type });
        log.info({ durationMs }, 'processed');
      } else if (verdict.why === 'duplicate') {
        metrics?.duplicatesSuppressed.inc({ source: envelope.source, layer: 'worker' });
        log.info('duplicate suppressed: already processed');
      } else if (verdict.why === 'already-dead-lettered') {
        log.info('acked: the event record already holds it as a dead letter');
      } else {
        log.warn('acked without running: no handler for this type (unknownType: ack)');
      }
      return;
    case 'retry': {
      metrics?.retries.inc({ type, code: verdict.code });
      const fields = {
        code: verdict.code,
        delayMs: verdict.delayMs,
        error: verdict.error,
        durationMs,
      };
      if (verdict.failure) log.warn(fields, 'retry scheduled');
      else log.info(fields, 'retry scheduled');
      return;
    }
    case 'dead-letter':
      metrics?.deadLettered.inc({ type, code: verdict.code });
      log.error(
        { code: verdict.code, reason: verdict.reason, error: verdict.error, durationMs },
        `dead-lettered: ${verdict.reason}`,
      );
      return;
  }
}
