import type { Delivery } from '../contracts/transport.js';
import { LockLostError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { EventHandler } from './handler.js';
import { markLockLost } from './lock.js';
import type { Job } from './pipeline.js';

/**
 * Creates the job for one delivery: its child logger, and its abort controller, wired to the
 * delivery's own signal (lock loss reported by the transport). Call `dispose` when it is settled.
 */
export function createJob(
  delivery: Delivery,
  handler: EventHandler | undefined,
  logger: Logger,
  lockUntil: number,
): { readonly job: Job; dispose(): void } {
  const { envelope } = delivery;
  const job: Job = {
    delivery,
    envelope,
    attempt: delivery.attempt,
    handler,
    log: logger.child({
      eventId: envelope.id,
      eventType: envelope.type,
      source: envelope.source,
      attempt: delivery.attempt,
    }),
    abort: new AbortController(),
    abortedBy: undefined,
    lease: undefined,
    lockUntil,
    handlerMs: undefined,
  };
  const onLost = () => {
    const reason: unknown = delivery.signal.reason;
    markLockLost(job, reason instanceof Error ? reason : new LockLostError());
  };
  if (delivery.signal.aborted) onLost();
  else delivery.signal.addEventListener('abort', onLost, { once: true });
  return { job, dispose: () => delivery.signal.removeEventListener('abort', onLost) };
}
