import type { Envelope } from '../envelope.js';
import { type ErrorCode, isOnceflowError } from '../errors.js';
import { traceIdOf } from '../records/trace-id.js';

/**
 * The fields every log line about one event carries, in every component and adapter alike:
 * never the payload, never a header (signatures stay out of logs by construction).
 */
export interface EventLogFields {
  readonly source: string;
  readonly id: string;
  readonly type: string;
  /** The delivery attempt, where the line is about one (the receiver's lines have none). */
  readonly attempt?: number;
  /** The W3C trace id of the envelope's `traceparent`, when it has one. */
  readonly traceId?: string;
}

/**
 * The log fields of one event (see `EventLogFields`).
 *
 * @example
 * logger.warn({ ...eventLogFields(envelope, attempt), ...errorLogFields(err) }, 'settlement not recorded');
 */
export function eventLogFields(envelope: Envelope, attempt?: number): EventLogFields {
  const traceId = traceIdOf(envelope);
  const fields: { -readonly [K in keyof EventLogFields]: EventLogFields[K] } = {
    source: envelope.source,
    id: envelope.id,
    type: envelope.type,
  };
  if (attempt !== undefined) fields.attempt = attempt;
  if (traceId !== undefined) fields.traceId = traceId;
  return fields;
}

/**
 * `{ err, code }` for a line about a failure: the error itself (pino's serializer prints it) and
 * its onceflow error code (`INTERNAL` for anything that is not an `OnceflowError`), so lines can
 * be filtered by code on every component.
 *
 * @example
 * log.error({ ...errorLogFields(err), queue }, 'could not move the message'); // code: 'TRANSPORT_UNAVAILABLE'
 */
export function errorLogFields(err: unknown): { readonly err: unknown; readonly code: ErrorCode } {
  return { err, code: isOnceflowError(err) ? err.code : 'INTERNAL' };
}
