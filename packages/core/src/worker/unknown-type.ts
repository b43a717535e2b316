import { DECODE_ERROR_HEADER, UNDECODABLE } from '../transport-kit/decode-delivery.js';
import type { Middleware } from './pipeline.js';

/**
 * What to do with an event no handler is registered for: `dead-letter` (the default: it stays
 * inspectable and can be redriven once a handler exists) or `ack` (drop it on purpose, logged).
 * A message that was not a wire-format envelope (`decodeDelivery`) is always dead-lettered, its
 * raw bytes kept as the payload. Nothing else in the pipeline runs for either.
 */
export function unknownType(policy: 'dead-letter' | 'ack'): Middleware {
  // Not async on the way through: a routed delivery costs no promise of its own.
  return (next) => (job) => {
    const { envelope } = job;
    if (envelope.source === UNDECODABLE.source && envelope.type === UNDECODABLE.type) {
      const why = envelope.headers[DECODE_ERROR_HEADER] ?? 'not a wire-format envelope';
      return Promise.resolve({ status: 'undecodable', reason: why });
    }
    if (job.handler !== undefined) return next(job);
    return Promise.resolve(
      policy === 'ack' ? { status: 'ignored' } : { status: 'unroutable', type: envelope.type },
    );
  };
}
