/**
 * Every error onceflow raises is an `OnceflowError` with a literal `code`. Handlers use three of
 * them to steer the outcome of a delivery; the rest describe what went wrong in the pipeline.
 *
 * | code | thrown by | outcome |
 * |---|---|---|
 * | `NON_RETRYABLE` | handlers | dead-lettered at once, remaining attempts skipped |
 * | `RETRY_LATER` | handlers | retried after `delayMs`, not counted as a failure |
 * | `SCHEMA` | the worker | payload failed its zod schema: dead-lettered at once |
 * | `SIGNATURE` | verifiers | receiver answers 401 |
 * | `PAYLOAD_TOO_LARGE` | receiver | 413 |
 * | `UNKNOWN_SOURCE` | receiver | 404 |
 * | `BAD_REQUEST` | verifiers | 400 (verified body lacks an event id, …) |
 * | `STORE_UNAVAILABLE` | inbox stores | receiver answers 503 |
 * | `TRANSPORT_UNAVAILABLE` | adapters | receiver answers 503; worker retries |
 * | `LOCK_LOST` | adapters | the delivery's lock expired; another consumer may hold it |
 * | `ALREADY_PROCESSED` | processed stores | another attempt completed this event first |
 * | `WIRE_FORMAT` | decoders | message is not a v1 envelope: dead-lettered |
 * | `CONFIG` | factories, start-up checks | refuses to start |
 * | `USAGE` | stores and helpers called wrongly by code | a programming error: dead-lettered at once, never retried |
 * | `INTERNAL` | the normaliser | anything else that was thrown |
 */
export type ErrorCode =
  | 'NON_RETRYABLE'
  | 'RETRY_LATER'
  | 'SCHEMA'
  | 'SIGNATURE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNKNOWN_SOURCE'
  | 'BAD_REQUEST'
  | 'STORE_UNAVAILABLE'
  | 'TRANSPORT_UNAVAILABLE'
  | 'LOCK_LOST'
  | 'ALREADY_PROCESSED'
  | 'WIRE_FORMAT'
  | 'CONFIG'
  | 'USAGE'
  | 'INTERNAL';

export class OnceflowError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Thrown by a handler: this event can never succeed; dead-letter it now with this reason. */
export class NonRetryableError extends OnceflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NON_RETRYABLE', message, options);
  }
}

/** Thrown by a handler: not now, try again after `delayMs` (does not count as a failure). */
export class RetryLaterError extends OnceflowError {
  readonly delayMs: number;
  constructor(delayMs: number, message = `retry in ${delayMs} ms`) {
    super('RETRY_LATER', message);
    this.delayMs = delayMs;
  }
}

/** The payload did not match the handler's schema: dead-lettered at once. */
export class SchemaError extends OnceflowError {
  readonly issues: readonly { path: string; message: string }[];
  constructor(message: string, issues: readonly { path: string; message: string }[] = []) {
    super('SCHEMA', message);
    this.issues = issues;
  }
}

/** Missing or bad signature, stale timestamp, wrong clientState. Answered with 401. */
export class SignatureError extends OnceflowError {
  constructor(message: string) {
    super('SIGNATURE', message);
  }
}

export class PayloadTooLargeError extends OnceflowError {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `body exceeds ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

export class UnknownSourceError extends OnceflowError {
  constructor(source: string) {
    super('UNKNOWN_SOURCE', `no source named "${source}"`);
  }
}

/** A verified request that still cannot be accepted (no event id, unparseable JSON, …). */
export class BadRequestError extends OnceflowError {
  constructor(message: string) {
    super('BAD_REQUEST', message);
  }
}

/** The inbox (or processed store) could not be reached or failed. Nothing was recorded. */
export class StoreUnavailableError extends OnceflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, options);
  }
}

/** The broker could not confirm durability. The message may or may not have been stored. */
export class TransportUnavailableError extends OnceflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TRANSPORT_UNAVAILABLE', message, options);
  }
}

/** The delivery's lock/lease/visibility expired; settling it now may not take effect. */
export class LockLostError extends OnceflowError {
  constructor(message = 'lock lost', options?: { cause?: unknown }) {
    super('LOCK_LOST', message, options);
  }
}

/** Another attempt already completed this event (raised inside a same-transaction mark). */
export class AlreadyProcessedError extends OnceflowError {
  constructor(source: string, id: string) {
    super('ALREADY_PROCESSED', `${source}/${id} was already processed`);
  }
}

export class WireFormatError extends OnceflowError {
  constructor(message: string) {
    super('WIRE_FORMAT', message);
  }
}

export class ConfigError extends OnceflowError {
  constructor(message: string) {
    super('CONFIG', message);
  }
}

/**
 * A programming error: a helper or store was called with arguments that can never work (a
 * missing option, a value taken from the wrong place). Retrying cannot fix it, so a handler that
 * throws it is dead-lettered at once with this message as the reason.
 */
export class UsageError extends OnceflowError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

/**
 * The one normaliser: turns anything thrown into an `OnceflowError` (code `INTERNAL` for
 * foreign errors, keeping the original as `cause`).
 *
 * @example
 * catch (e) { const err = toOnceflowError(e); if (err.code === 'NON_RETRYABLE') … }
 */
export function toOnceflowError(thrown: unknown): OnceflowError {
  if (thrown instanceof OnceflowError) return thrown;
  if (thrown instanceof Error) {
    const err = new OnceflowError('INTERNAL', thrown.message, { cause: thrown });
    if (thrown.stack) err.stack = thrown.stack;
    return err;
  }
  return new OnceflowError('INTERNAL', String(thrown), { cause: thrown });
}

/** A compact, serialisable description of an error, as kept with dead letters. */
export interface ErrorInfo {
  code: ErrorCode;
  name: string;
  message: string;
}

export function errorInfo(thrown: unknown): ErrorInfo {
  const err = toOnceflowError(thrown);
  const original = err.code === 'INTERNAL' && err.cause instanceof Error ? err.cause : err;
  return { code: err.code, name: original.name, message: err.message };
}
