import type { ErrorCode, ErrorInfo } from '../errors.js';

/**
 * Broker-message header names every adapter uses for onceflow's own metadata, so that dead
 * letters and retries read the same on every broker. These are message headers/attributes next
 * to the wire-format body, never envelope headers.
 */
export const ONCEFLOW_HEADERS = {
  /** Wire format version of the body (`1`). */
  wireVersion: 'x-onceflow-wire',
  /** The envelope id (the event id), for brokers that index or filter on headers. */
  eventId: 'x-onceflow-event-id',
  /** The dedupe key the message was published with. */
  dedupeKey: 'x-onceflow-dedupe-key',
  /** Attempt number the next delivery of this message will have (decimal). */
  attempt: 'x-onceflow-attempt',
  /** Not deliverable before this time (epoch ms, decimal), for brokers without native delay. */
  notBefore: 'x-onceflow-not-before',
  /** The last error (JSON `ErrorInfo`) carried by a retried message. */
  lastError: 'x-onceflow-last-error',
  /** Why the message was dead-lettered. */
  deadLetterReason: 'x-onceflow-dead-letter-reason',
  /** Attempts made before it was dead-lettered (decimal). */
  deadLetterAttempts: 'x-onceflow-dead-letter-attempts',
  /** The error that caused the dead-lettering (JSON `ErrorInfo`). */
  deadLetterError: 'x-onceflow-dead-letter-error',
  /** When it was dead-lettered (ISO-8601). */
  deadLetteredAt: 'x-onceflow-dead-lettered-at',
} as const;

/**
 * What an adapter writes on a message it moves to the broker's own dead-letter destination
 * (`deliveryLimit` reached), and what the worker reads back when it records that dead letter.
 */
export interface BrokerDeadLetterFields {
  readonly reason: string;
  /** Deliveries made before it was moved. */
  readonly attempts: number;
  readonly lastError?: ErrorInfo | undefined;
  /** ISO-8601. */
  readonly deadLetteredAt: string;
}

/**
 * The dead-letter metadata as broker-message headers (string values).
 *
 * @example
 * channel.publish('', dlq, body, { headers: deadLetterHeaders({ reason, attempts, lastError, deadLetteredAt }) });
 */
export function deadLetterHeaders(fields: BrokerDeadLetterFields): Record<string, string> {
  const h: Record<string, string> = {
    [ONCEFLOW_HEADERS.deadLetterReason]: fields.reason,
    [ONCEFLOW_HEADERS.deadLetterAttempts]: String(fields.attempts),
    [ONCEFLOW_HEADERS.deadLetteredAt]: fields.deadLetteredAt,
  };
  if (fields.lastError !== undefined) {
    h[ONCEFLOW_HEADERS.deadLetterError] = JSON.stringify(fields.lastError);
  }
  return h;
}

/**
 * Reads what `deadLetterHeaders` wrote. Missing or malformed values fall back to
 * `reason: 'unknown'`, `attempts: 0`, no error, and `deadLetteredAt` = `fallbackAt`.
 *
 * @example
 * const fields = readDeadLetterHeaders(message.properties.headers ?? {}, new Date().toISOString());
 */
export function readDeadLetterHeaders(
  headers: Readonly<Record<string, unknown>>,
  fallbackAt: string,
): BrokerDeadLetterFields {
  const text = (name: string) => {
    const v = headers[name];
    if (typeof v === 'string') return v;
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return typeof v === 'number' ? String(v) : undefined;
  };
  const attempts = Number(text(ONCEFLOW_HEADERS.deadLetterAttempts));
  return {
    reason: text(ONCEFLOW_HEADERS.deadLetterReason) ?? 'unknown',
    attempts: Number.isInteger(attempts) && attempts >= 0 ? attempts : 0,
    lastError: parseErrorInfo(text(ONCEFLOW_HEADERS.deadLetterError)),
    deadLetteredAt: text(ONCEFLOW_HEADERS.deadLetteredAt) ?? fallbackAt,
  };
}

/** Parses a JSON `ErrorInfo` header value; undefined when absent or malformed. */
export function parseErrorInfo(value: string | undefined): ErrorInfo | undefined {
  if (value === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(value);
    if (typeof v !== 'object' || v === null) return undefined;
    const { code, name, message } = v as Record<string, unknown>;
    if (typeof code !== 'string' || typeof name !== 'string' || typeof message !== 'string') {
      return undefined;
    }
    return { code: code as ErrorCode, name, message };
  } catch {
    return undefined;
  }
}
