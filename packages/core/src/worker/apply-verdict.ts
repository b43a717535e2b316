import { isOnceflowError } from '../errors.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import type { Job } from './job.js';
import type { Verdict } from './verdict.js';

/**
 * Applies a verdict to the delivery, then counts it and logs one line for it. A line and a count
 * are written only once the transport accepted the settlement: nothing is reported dead-lettered
 * that is not in the dead-letter store. A settlement the transport refuses (lock lost, broker
 * down) is logged as such; the message then returns to the broker and is decided again.
 */
export async function applyVerdict(
  job: Job,
  verdict: Verdict,
  metrics: OnceflowMetrics | undefined,
): Promise<void> {
  const { delivery, envelope, log } = job;
  const type = envelope.type;
  try {
    if (verdict.action === 'ack') await delivery.ack();
    else if (verdict.action === 'retry') {
      await delivery.retry({ delayMs: verdict.delayMs, error: verdict.error });
    } else await delivery.deadLetter({ reason: verdict.reason, error: verdict.error });
  } catch (err) {
    const lost = isOnceflowError(err, 'LOCK_LOST');
    const msg = `could not ${verdict.action}: the transport will deliver it again`;
    if (lost) log.warn({ err, outcome: verdict }, `${msg} (lock lost)`);
    else log.error({ err, outcome: verdict }, msg);
    return;
  }
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
      } else {
        log.warn('acked without running: no handler for this type (unknownType: ack)');
      }
      return;
    case 'retry':
      metrics?.retries.inc({ type, code: verdict.code });
      {
        const fields = {
          code: verdict.code,
          delayMs: verdict.delayMs,
          error: verdict.error,
          durationMs,
        };
        if (verdict.failure) log.warn(fields, 'retry scheduled');
        else log.info(fields, 'retry scheduled');
      }
      return;
    case 'dead-letter':
      metrics?.deadLettered.inc({ type, code: verdict.code });
      log.error(
        { code: verdict.code, reason: verdict.reason, error: verdict.error, durationMs },
        `dead-lettered: ${verdict.reason}`,
      );
      return;
  }
}
