import type { Middleware } from './pipeline.js';

/**
 * What to do with an event no handler is registered for: `dead-letter` (the default: it stays
 * inspectable and can be redriven once a handler exists) or `ack` (drop it on purpose, logged).
 * Nothing else in the pipeline runs for it, not even the processed-guard.
 */
export function unknownType(policy: 'dead-letter' | 'ack'): Middleware {
  return (next) => async (job) => {
    if (job.handler !== undefined) return next(job);
    return policy === 'ack'
      ? { status: 'ignored' }
      : { status: 'unroutable', type: job.envelope.type };
  };
}
