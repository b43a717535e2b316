/**
 * The errors that decide what happens to a request or a delivery: each an `OnceflowError` with a
 * literal `code`. Handlers throw three of them to steer a delivery; the rest describe what went
 * wrong in the pipeline. Not everything thrown is one: handlers, broker clients and drivers throw
 * their own errors, and adapters throw `RangeError` for a call outside the contract (a retry delay
 * beyond the broker's limit). Where core decides an outcome, `toOnceflowError` turns anything else
 * into code `INTERNAL`.
 *
 * Recognise them with `isOnceflowError(err, 'LOCK_LOST')`: it checks a brand
 * (`Symbol.for('onceflow.error')`) and `code`, not the class, so an error made by another installed
 * copy of `@onceflow/core` is recognised too. `instanceof` on these classes checks the same.
 *
 * | code | thrown by | outcome |
 * |---|---|---|
 * | `NON_RETRYABLE` | handlers | dead-lettered at once, remaining attempts skipped |
 * | `RETRY_LATER` | handlers | retried after `delayMs`, not counted as a failure |
 * | `SCHEMA` | the worker | payload failed its zod schema: dead-lettered at once |
 * | `SIGNATURE` | verifiers | receiver answers 401 |
 * | `PAYLOAD_TOO_LARGE` | receiver | 413 |
 * | `BAD_REQUEST` | verifiers | 400 (verified body lacks an event id, …) |
 * | `STORE_UNAVAILABLE` | inbox stores | receiver answers 503 |
 * | `SECRETS_LOOKUP` | per-tenant secret lookups (`tenantSecrets`) | receiver answers 503 with `Retry-After`, never 2xx or 401 |
 * | `TRANSPORT_UNAVAILABLE` | adapters | receiver answers 503; worker retries |
 * | `LOCK_LOST` | adapters | the delivery's lock expired; another consumer may hold it |
 * | `ALREADY_PROCESSED` | processed stores | another attempt completed this event first |
 * | `WIRE_FORMAT` | decoders | message is not a v1 envelope: dead-lettered |
 * | `CONFIG` | factories, start-up checks | refuses to start |
 * | `USAGE` | stores and helpers called wrongly by code | a programming error: dead-lettered at once, never retried |
 * | `REVIEW` | handlers (`defineTransitions(…).check`) | a state change the event may not make: dead-lettered at once, reason `review: …` |
 * | `INTERNAL` | the normaliser | anything else that was thrown |
 */
export type ErrorCode =
  | 'NON_RETRYABLE'
  | 'RETRY_LATER'
  | 'SCHEMA'
  | 'SIGNATURE'
  | 'PAYLOAD_TOO_LARGE'
  | 'BAD_REQUEST'
  | 'STORE_UNAVAILABLE'
  | 'SECRETS_LOOKUP'
  | 'TRANSPORT_UNAVAILABLE'
  | 'LOCK_LOST'
  | 'ALREADY_PROCESSED'
  | 'WIRE_FORMAT'
  | 'CONFIG'
  | 'USAGE'
  | 'REVIEW'
  | 'INTERNAL';

/** Marks an `OnceflowError` from any installed copy of core (a registered symbol is shared). */
const BRAND: unique symbol = Symbol.for('onceflow.error') as never;

/**
 * The base of every error in the table above. Construct the subclass for a code, not this class
 * with the subclass's code: `isOnceflowError(err, 'RETRY_LATER')` promises a `RetryLaterError`.
 */
export class OnceflowError extends Error {
  /** The code every instance of this class carries (each subclass sets its own); any code here. */
  static readonly code: ErrorCode | undefined = undefined;
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * `err instanceof LockLostError` is `isOnceflowError(err, 'LOCK_LOST')`, so it agrees across
   * installed copies of core. A class of your own deriving from these keeps ordinary `instanceof`.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class right of `instanceof`, often a subclass
    return isInstance(this, value);
  }
}

function isInstance(cls: typeof OnceflowError, value: unknown): boolean {
  if (!Object.hasOwn(cls, 'code')) return Function.prototype[Symbol.hasInstance].call(cls, value);
  return isOnceflowError(value, cls.code);
}

/** Thrown by a handler: this event can never succeed; dead-letter it now with this reason. */
export class NonRetryableError extends OnceflowError {
  static override readonly code = 'NON_RETRYABLE' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super('NON_RETRYABLE', message, options);
  }
}

/** Thrown by a handler: not now, try again after `delayMs` (does not count as a failure). */
export class RetryLaterError extends OnceflowError {
  static override readonly code = 'RETRY_LATER' as const;
  readonly delayMs: number;
  constructor(delayMs: number, message = `retry in ${delayMs} ms`) {
    super('RETRY_LATER', message);
    this.delayMs = delayMs;
  }
}

/** The payload did not match the handler's schema: dead-lettered at once. */
export class SchemaError extends OnceflowError {
  static override readonly code = 'SCHEMA' as const;
  readonly issues: readonly { path: string; message: string }[];
  constructor(message: string, issues: readonly { path: string; message: string }[] = []) {
    super('SCHEMA', message);
    this.issues = issues;
  }
}

/** Missing or bad signature, stale timestamp, wrong clientState. Answered with 401. */
export class SignatureError extends OnceflowError {
  static override readonly code = 'SIGNATURE' as const;
  constructor(message: string) {
    super('SIGNATURE', message);
  }
}

export class PayloadTooLargeError extends OnceflowError {
  static override readonly code = 'PAYLOAD_TOO_LARGE' as const;
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `body exceeds ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

/** A verified request that still cannot be accepted (no event id, unparseable JSON, …). */
export class BadRequestError extends OnceflowError {
  static override readonly code = 'BAD_REQUEST' as const;
  constructor(message: string) {
    super('BAD_REQUEST', message);
  }
}

/** The inbox (or processed store) could not be reached or failed. Nothing was recorded. */
export class StoreUnavailableError extends OnceflowError {
  static override readonly code = 'STORE_UNAVAILABLE' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, options);
  }
}

/**
 * A source's secrets could not be looked up (the lookup rejected, timed out, or returned secrets
 * the sender's verifier refuses). Nothing was verified or stored: the receiver answers 503 with
 * `Retry-After`, so the sender retries, and never 401 (which some senders treat as final).
 */
export class SecretsLookupError extends OnceflowError {
  static override readonly code = 'SECRETS_LOOKUP' as const;
  /** The source and tenant whose secrets were looked up. */
  readonly source: string;
  readonly tenant: string | undefined;
  constructor(source: string, tenant: string | undefined, options?: { cause?: unknown }) {
    const cause = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      'SECRETS_LOOKUP',
      `secrets lookup failed for ${source}${tenant === undefined ? '' : `/${tenant}`}${cause}`,
      options,
    );
    this.source = source;
    this.tenant = tenant;
  }
}

/** The broker could not confirm durability. The message may or may not have been stored. */
export class TransportUnavailableError extends OnceflowError {
  static override readonly code = 'TRANSPORT_UNAVAILABLE' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super('TRANSPORT_UNAVAILABLE', message, options);
  }
}

/** The delivery's lock/lease/visibility expired; settling it now may not take effect. */
export class LockLostError extends OnceflowError {
  static override readonly code = 'LOCK_LOST' as const;
  constructor(message = 'lock lost', options?: { cause?: unknown }) {
    super('LOCK_LOST', message, options);
  }
}

/** Another attempt already completed this event (raised inside a same-transaction mark). */
export class AlreadyProcessedError extends OnceflowError {
  static override readonly code = 'ALREADY_PROCESSED' as const;
  constructor(source: string, id: string) {
    super('ALREADY_PROCESSED', `${source}/${id} was already processed`);
  }
}

export class WireFormatError extends OnceflowError {
  static override readonly code = 'WIRE_FORMAT' as const;
  constructor(message: string) {
    super('WIRE_FORMAT', message);
  }
}

export class ConfigError extends OnceflowError {
  static override readonly code = 'CONFIG' as const;
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
  static override readonly code = 'USAGE' as const;
  constructor(message: string) {
    super('USAGE', message);
  }
}

/**
 * Thrown by a handler: applying this event would make a state change that is not allowed (an
 * `approved` order asked to go back to `pending`). Retrying cannot fix it and overwriting newer
 * state would be wrong, so the worker dead-letters it at once with the reason
 * `review: <message>`, for a person to look at (`onceflow dead-letters list --reason review`).
 * `defineTransitions(…).check(from, to)` throws it with `from` and `to` set.
 */
export class ReviewError extends OnceflowError {
  static override readonly code = 'REVIEW' as const;
  /** The state the record was in, when a transition check threw it. */
  readonly from: string | undefined;
  /** The state the event asked for, when a transition check threw it. */
  readonly to: string | undefined;
  constructor(message: string, transition?: { readonly from: string; readonly to: string }) {
    super('REVIEW', message);
    this.from = transition?.from;
    this.to = transition?.to;
  }
}

/** The class each code is raised as; `INTERNAL` errors are the base class. */
export interface ErrorByCode {
  NON_RETRYABLE: NonRetryableError;
  RETRY_LATER: RetryLaterError;
  SCHEMA: SchemaError;
  SIGNATURE: SignatureError;
  PAYLOAD_TOO_LARGE: PayloadTooLargeError;
  BAD_REQUEST: BadRequestError;
  STORE_UNAVAILABLE: StoreUnavailableError;
  SECRETS_LOOKUP: SecretsLookupError;
  TRANSPORT_UNAVAILABLE: TransportUnavailableError;
  LOCK_LOST: LockLostError;
  ALREADY_PROCESSED: AlreadyProcessedError;
  WIRE_FORMAT: WireFormatError;
  CONFIG: ConfigError;
  USAGE: UsageError;
  REVIEW: ReviewError;
  INTERNAL: OnceflowError;
}

/**
 * Whether `value` is an `OnceflowError` (with this `code`, if given), made by this or any other
 * installed copy of `@onceflow/core`. The way to recognise onceflow's errors.
 *
 * @example
 * catch (err) { if (isOnceflowError(err, 'RETRY_LATER')) console.log(err.delayMs); }
 */
export function isOnceflowError<C extends ErrorCode>(
  value: unknown,
  code: C,
): value is ErrorByCode[C];
export function isOnceflowError(value: unknown, code?: ErrorCode): value is OnceflowError;
export function isOnceflowError(value: unknown, code?: ErrorCode): value is OnceflowError {
  if (typeof value !== 'object' || value === null) return false;
  const branded = value as { [BRAND]?: unknown; code?: unknown };
  if (branded[BRAND] !== true || typeof branded.code !== 'string') return false;
  return code === undefined || branded.code === code;
}

/**
 * The one normaliser: turns anything thrown into an `OnceflowError`. An `OnceflowError` from any
 * copy of core is returned as it is (code, message and fields kept); anything else becomes code
 * `INTERNAL`, keeping the original as `cause`.
 *
 * @example
 * catch (e) { const err = toOnceflowError(e); if (err.code === 'NON_RETRYABLE') … }
 */
export function toOnceflowError(thrown: unknown): OnceflowError {
  if (isOnceflowError(thrown)) return thrown;
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

/**
 * What `thrown` was, normalised as `toOnceflowError` does; `name` is the original error's for
 * `INTERNAL` ones (`TypeError`, a driver's error class).
 *
 * @example
 * errorInfo(new TypeError('x is undefined')); // { code: 'INTERNAL', name: 'TypeError', message: 'x is undefined' }
 */
export function errorInfo(thrown: unknown): ErrorInfo {
  const err = toOnceflowError(thrown);
  const original = err.code === 'INTERNAL' && err.cause instanceof Error ? err.cause : err;
  return { code: err.code, name: original.name, message: err.message };
}
