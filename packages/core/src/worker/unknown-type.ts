import { DECODE_ERROR_HEADER, UNDECODABLE } from '../transport-kit/decode-delivery.js';
import type { Job } from './job.js';
import type { StepResult } from './pipeline.js';

/**
 * What to do with an event no handler is registered for: `dead-letter` (the default: it stays
 * inspectable and can be redriven once a handler exists) or `ack` (drop it on purpose, logged).
 * A message that was not a wire-format envelope (`decodeDelivery`) is always dead-lettered, its
 * raw bytes kept as the payload. Nothing else in the pipeline runs for either.
 *
 * Returns `undefined` for a job that has a handler and was decoded: the pipeline goes on.
 */
export function unknownType(policy: 'dead-letter' | 'ack'): (job: Job) => StepResult | undefined {
  return (job) => {
    const { envelope } = job;
    if (envelope.source === UNDECODABLE.source && envelope.type === UNDECODABLE.type) {
      const why = envelope.headers[DECODE_ERROR_HEADER] ?? 'not a wire-format envelope';
      return { status: 'undecodable', reason: why };
    }
    if (job.handler !== undefined) return undefined;
    return policy === 'ack' ? IGNORED : { status: 'unroutable', type: envelope.type };
  };
}

const IGNORED: StepResult = { status: 'ignored' };
