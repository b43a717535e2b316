import type { Envelope } from '../envelope.js';

/**
 * The W3C trace id of the envelope's `traceparent` header (`00-<trace id>-<span id>-<flags>`),
 * kept on the event record so an operator can jump from an event to its trace.
 *
 * @example
 * traceIdOf(envelope); // '4bf92f3577b34da6a3ce929d0e0e4736' or undefined
 */
export function traceIdOf(envelope: Envelope): string | undefined {
  const parts = envelope.headers.traceparent?.split('-');
  return parts?.length === 4 && /^[0-9a-f]{32}$/.test(parts[1] ?? '') ? parts[1] : undefined;
}
