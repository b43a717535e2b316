import { describe, expect, it } from 'vitest';
import {
  AlreadyProcessedError,
  NonRetryableError,
  RetryLaterError,
  SchemaError,
  StoreUnavailableError,
} from '../../src/errors.js';
import { decideVerdict, type VerdictPolicy } from '../../src/worker/verdict.js';

const policy = (over: Partial<VerdictPolicy> = {}): VerdictPolicy => ({
  attempt: 1,
  maxAttempts: 3,
  backoff: (attempt) => attempt * 100,
  maxDelayMs: 10_000,
  interruptedByShutdown: false,
  ...over,
});

describe('decideVerdict', () => {
  it('acks handled, duplicate and ignored results', () => {
    expect(decideVerdict({ result: { status: 'handled' } }, policy())).toEqual({
      action: 'ack',
      why: 'processed',
    });
    expect(decideVerdict({ result: { status: 'duplicate' } }, policy()).action).toBe('ack');
    expect(decideVerdict({ error: new AlreadyProcessedError('s', 'e') }, policy())).toEqual({
      action: 'ack',
      why: 'duplicate',
    });
  });

  it('retries busy without counting a failure, even past maxAttempts', () => {
    const o = decideVerdict(
      { result: { status: 'busy', retryAfterMs: 250 } },
      policy({ attempt: 9 }),
    );
    expect(o).toEqual({ action: 'retry', delayMs: 250, code: 'BUSY', failure: false });
  });

  it('dead-letters at once for NonRetryableError and schema failures, on attempt 1', () => {
    const nr = decideVerdict({ error: new NonRetryableError('card declined') }, policy());
    expect(nr).toMatchObject({
      action: 'dead-letter',
      code: 'NON_RETRYABLE',
      reason: 'card declined',
    });
    const schema = new SchemaError('bad', [{ path: 'amount', message: 'expected number' }]);
    expect(decideVerdict({ error: schema }, policy())).toMatchObject({
      action: 'dead-letter',
      code: 'SCHEMA',
      reason: 'schema: amount: expected number',
    });
  });

  it('backs off on ordinary errors, then dead-letters with the last error at maxAttempts', () => {
    const err = new Error('boom');
    expect(decideVerdict({ error: err }, policy({ attempt: 2 }))).toMatchObject({
      action: 'retry',
      delayMs: 200,
      code: 'INTERNAL',
      failure: true,
      error: { code: 'INTERNAL', name: 'Error', message: 'boom' },
    });
    expect(decideVerdict({ error: err }, policy({ attempt: 3 }))).toMatchObject({
      action: 'dead-letter',
      reason: 'attempts exhausted',
      error: { message: 'boom' },
    });
    const store = new StoreUnavailableError('db down');
    expect(decideVerdict({ error: store }, policy())).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('honours RetryLaterError delays, capped by the transport', () => {
    expect(decideVerdict({ error: new RetryLaterError(5000) }, policy())).toMatchObject({
      action: 'retry',
      delayMs: 5000,
      failure: false,
    });
    const capped = decideVerdict({ error: new RetryLaterError(60_000) }, policy());
    expect(capped).toMatchObject({ delayMs: 10_000 });
  });

  it('turns a failure interrupted by shutdown into a free immediate retry', () => {
    const o = decideVerdict(
      { error: new Error('aborted') },
      policy({ attempt: 3, interruptedByShutdown: true }),
    );
    expect(o).toMatchObject({ action: 'retry', delayMs: 0, code: 'SHUTDOWN', failure: false });
  });

  it('dead-letters unroutable and exhausted-on-arrival results without an error', () => {
    expect(decideVerdict({ result: { status: 'unroutable', type: 'x.y' } }, policy())).toEqual({
      action: 'dead-letter',
      code: 'UNKNOWN_TYPE',
      reason: 'no handler for type "x.y"',
    });
    expect(decideVerdict({ result: { status: 'exhausted' } }, policy())).toEqual({
      action: 'dead-letter',
      code: 'ATTEMPTS_EXHAUSTED',
      reason: 'attempts exhausted',
    });
  });
});
