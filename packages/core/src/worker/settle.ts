import { toOnceflowError } from '../errors.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import type { Outcome } from './outcome.js';
import type { Job } from './job.js';

/**
 * Applies an outcome to the delivery, then counts it and logs one line for it. A line and a count
 * are written only once the transport accepted the settlement: nothing is reported dead-lettered
 * that is not in the dead-letter store. A settlement the transport refuses (lock lost, broker
 * down) is logged as such; the message then returns to the broker and is decided again.
 */
export async function settle(
  job: Job,
  outcome: Outcome,
  metrics: OnceflowMetrics | undefined,
): Promise<void> {
  const { delivery, envelope, log } = job;
  const type = envelope.type;
  try {
    if (outcome.action === 'ack') await delivery.ack();
    else if (outcome.action === 'retry') {
      await delivery.retry({ delayMs: outcome.delayMs, error: outcome.error });
    } else await delivery.deadLetter({ reason: outcome.reason, error: outcome.error });
  } catch (err) {
    const lost = toOnceflowError(err).code === 'LOCK_LOST';
    const msg = `could not ${outcome.action}: the transport will deliver it again`;
    if (lost) log.warn({ err, outcome }, `${msg} (lock lost)`);
    else log.error({ err, outcome }, msg);
    return;
  }
  const label = outcome.action === 'ack' ? outcome.why : outcome.action;
  if (job.handlerMs !== undefined) {
    metrics?.handlerDuration.observe({ type, outcome: label }, job.handlerMs / 1000);
  }
  const durationMs = job.handlerMs;
  switch (outcome.action) {
    case 'ack':
      if (outcome.why === 'processed') {
        metrics?.processed.inc({ type });
        log.info({ durationMs }, 'processed');
      } else if (outcome.why === 'duplicate') {
        metrics?.duplicatesSuppressed.inc({ source: envelope.source, layer: 'worker' });
        log.info('duplicate suppressed: already processed');
      } else {
        log.warn('acked without running: no handler for this type (unknownType: ack)');
      }
      return;
    case 'retry':
      metrics?.retries.inc({ type, code: outcome.code });
      {
        const fields = {
          code: outcome.code,
          delayMs: outcome.delayMs,
          error: outcome.error,
          durationMs,
        };
        if (outcome.failure) log.warn(fields, 'retry scheduled');
        else log.info(fields, 'retry scheduled');
      }
      return;
    case 'dead-letter':
      metrics?.deadLettered.inc({ type, code: outcome.code });
      log.error(
        { code: outcome.code, reason: outcome.reason, error: outcome.error, durationMs },
        `dead-lettered: ${outcome.reason}`,
      );
      return;
  }
}
