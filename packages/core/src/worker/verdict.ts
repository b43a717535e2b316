import { type ErrorInfo, errorInfo, SchemaError, toOnceflowError } from '../errors.js';
import type { StepResult } from './pipeline.js';

/**
 * The worker's verdict on a delivery: ack, retry or dead-letter. `code` is the metrics label: the
 * error code when an error caused it, else `BUSY`, `SHUTDOWN`, `ATTEMPTS_EXHAUSTED` or
 * `UNKNOWN_TYPE`.
 */
export type Verdict =
  | {
      readonly action: 'ack';
      readonly why: 'processed' | 'duplicate' | 'ignored' | 'already-dead-lettered';
    }
  | {
      readonly action: 'retry';
      readonly delayMs: number;
      readonly code: string;
      /** False for retries that are nobody's fault (busy lease, `RetryLaterError`, shutdown). */
      readonly failure: boolean;
      readonly error?: ErrorInfo | undefined;
    }
  | {
      readonly action: 'dead-letter';
      readonly code: string;
      readonly reason: string;
      readonly error?: ErrorInfo | undefined;
    };

export interface VerdictPolicy {
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Delay before retrying after `attempt` failed (the retry policy). */
  readonly backoff: (attempt: number) => number;
  /** The transport's longest delay; longer delays are shortened to it. */
  readonly maxDelayMs: number;
  /** The worker aborted this handler because it is shutting down. */
  readonly interruptedByShutdown: boolean;
}

/** The verdicts of nearly every delivery, one frozen object each rather than one per delivery. */
export const PROCESSED: Verdict = Object.freeze({ action: 'ack', why: 'processed' });
const DUPLICATE: Verdict = Object.freeze({ action: 'ack', why: 'duplicate' });

const MAX_REASON = 1000;
const clip = (s: string) => (s.length > MAX_REASON ? `${s.slice(0, MAX_REASON - 1)}…` : s);

/** A delay in ms within [0, `maxDelayMs`]. */
const clampDelay = (ms: number, maxDelayMs: number) => Math.max(0, Math.min(ms, maxDelayMs));

function schemaReason(err: SchemaError): string {
  const issues = err.issues.map((i) => `${i.path === '' ? '(root)' : i.path}: ${i.message}`);
  return clip(`schema: ${issues.length > 0 ? issues.join('; ') : err.message}`);
}

/**
 * The one place that decides ack, retry or dead-letter, from what the pipeline returned or threw.
 * Pure.
 *
 * @example
 * decideVerdict({ error: new NonRetryableError('card declined') }, policy); // dead-letter
 */
export function decideVerdict(
  input: { readonly result: StepResult } | { readonly error: unknown },
  policy: VerdictPolicy,
): Verdict {
  if ('result' in input) {
    const r = input.result;
    switch (r.status) {
      case 'handled':
        return PROCESSED;
      case 'duplicate':
        return DUPLICATE;
      case 'ignored':
        return { action: 'ack', why: 'ignored' };
      case 'already-dead-lettered':
        return { action: 'ack', why: 'already-dead-lettered' };
      case 'undecodable':
        return {
          action: 'dead-letter',
          code: 'WIRE_FORMAT',
          reason: clip(`undecodable: ${r.reason}`),
        };
      case 'busy':
        return {
          action: 'retry',
          delayMs: clampDelay(r.retryAfterMs, policy.maxDelayMs),
          code: 'BUSY',
          failure: false,
        };
      case 'exhausted':
        return { action: 'dead-letter', code: 'ATTEMPTS_EXHAUSTED', reason: 'attempts exhausted' };
      case 'unroutable':
        return {
          action: 'dead-letter',
          code: 'UNKNOWN_TYPE',
          reason: clip(`no handler for type "${r.type}"`),
        };
    }
  }
  const err = toOnceflowError(input.error);
  const info = errorInfo(input.error);
  switch (err.code) {
    case 'ALREADY_PROCESSED':
      return { action: 'ack', why: 'duplicate' };
    case 'NON_RETRYABLE':
    case 'USAGE':
      return { action: 'dead-letter', code: err.code, reason: clip(err.message), error: info };
    case 'REVIEW':
      return {
        action: 'dead-letter',
        code: err.code,
        reason: clip(`review: ${err.message}`),
        error: info,
      };
    case 'SCHEMA':
    case 'WIRE_FORMAT': {
      const reason =
        err instanceof SchemaError ? schemaReason(err) : clip(`schema: ${err.message}`);
      return { action: 'dead-letter', code: err.code, reason, error: info };
    }
    case 'RETRY_LATER': {
      const ms = 'delayMs' in err && typeof err.delayMs === 'number' ? err.delayMs : 0;
      return {
        action: 'retry',
        delayMs: clampDelay(ms, policy.maxDelayMs),
        code: err.code,
        failure: false,
        error: info,
      };
    }
  }
  if (policy.interruptedByShutdown) {
    return { action: 'retry', delayMs: 0, code: 'SHUTDOWN', failure: false, error: info };
  }
  if (policy.attempt >= policy.maxAttempts) {
    return { action: 'dead-letter', code: err.code, reason: 'attempts exhausted', error: info };
  }
  const delayMs = clampDelay(policy.backoff(policy.attempt), policy.maxDelayMs);
  return { action: 'retry', delayMs, code: err.code, failure: true, error: info };
}
