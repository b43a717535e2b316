import { loadClaimed, withEnvelope } from '../claim-check/load.js';
import type { RecordStore } from '../contracts/records.js';
import type { Delivery } from '../contracts/transport.js';
import { errorLogFields, eventLogFields } from '../observability/event-fields.js';
import type { Logger } from '../observability/logger.js';
import type { OnceflowMetrics } from '../observability/metrics.js';
import { isClaimCheckReference } from '../wire.js';

/** The metrics and history code of a reference the worker could not load. */
export const CLAIM_CHECK_CODE = 'CLAIM_CHECK';

export interface ClaimCheckDeps {
  readonly records: RecordStore;
  /** The worker's `claimCheck`: off, a reference is dead-lettered (with the stored envelope). */
  readonly enabled: boolean;
  readonly consumer: string;
  readonly logger: Logger;
  readonly metrics?: OnceflowMetrics | undefined;
  /** A store that does not answer: the broker offers the message again after this. */
  readonly retryMs: number;
}

/**
 * The worker's first step on a delivery: a claim-check reference becomes the stored envelope it
 * names (`loadClaimed`); everything else passes as it is, without I/O. A reference that cannot be
 * loaded (nothing stored, a hash mismatch) or that reaches a worker without `claimCheck` is
 * dead-lettered at once with the reason and acked: answers `undefined`, the delivery is settled.
 * A store that does not answer: the delivery is retried after `retryMs`, also `undefined`.
 */
export function claimCheckLoader(
  deps: ClaimCheckDeps,
): (delivery: Delivery) => Promise<Delivery | undefined> | Delivery {
  const { records, logger } = deps;
  return (delivery) => {
    if (!isClaimCheckReference(delivery.envelope)) return delivery;
    return (async () => {
      const fields = eventLogFields(delivery.envelope, delivery.attempt);
      let loaded: Awaited<ReturnType<typeof loadClaimed>>;
      try {
        loaded = await loadClaimed(records, delivery.envelope);
      } catch (err) {
        logger.error(
          { ...fields, ...errorLogFields(err) },
          'claim-check: could not load the event',
        );
        await delivery.retry({ delayMs: deps.retryMs });
        return undefined;
      }
      if (loaded.failure === undefined && deps.enabled)
        return withEnvelope(delivery, loaded.envelope);
      const reason =
        loaded.failure ?? 'claim-check: a reference reached a worker without the claimCheck option';
      try {
        await records.deadLetter(loaded.envelope, undefined, {
          reason,
          attempts: delivery.attempt,
          actor: deps.consumer,
        });
      } catch (err) {
        logger.error(
          { ...fields, ...errorLogFields(err) },
          'could not record the dead letter: the broker keeps the message',
        );
        await delivery.retry({ delayMs: deps.retryMs });
        return undefined;
      }
      deps.metrics?.deadLettered.inc({ type: delivery.envelope.type, code: CLAIM_CHECK_CODE });
      logger.warn({ ...fields, reason }, 'dead-lettered');
      await delivery.ack();
      return undefined;
    })().catch((err: unknown) => {
      const fields = eventLogFields(delivery.envelope, delivery.attempt);
      logger.warn({ ...fields, ...errorLogFields(err) }, 'claim-check: could not settle');
      return undefined;
    });
  };
}
