import { describe, expect, it } from 'vitest';
import { ConfigError, NonRetryableError, RetryLaterError } from '../../src/errors.js';
import { createWorker, defineHandler, type HandlerMiddleware } from '../../src/worker/index.js';
import { event, fixture, waitFor } from './fixture.js';

/** The `HandlerMiddleware` doc's example, with the retry delay as a parameter. */
const timeout =
  (ms: number, retryInMs: number): HandlerMiddleware =>
  (next) =>
  async (ctx) => {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ms)]);
    try {
      await next({ ...ctx, signal });
    } catch (err) {
      if (!signal.aborted || ctx.signal.aborted) throw err;
      throw new RetryLaterError(retryInMs, `${ctx.envelope.type}: handler took over ${ms} ms`);
    }
  };

describe('worker middleware (your own steps)', () => {
  it('runs around the handler, the first step outermost, with the delivery context', async () => {
    await using f = fixture();
    const trace: string[] = [];
    const step =
      (name: string): HandlerMiddleware =>
      (next) =>
      async (ctx) => {
        trace.push(`${name} before ${ctx.envelope.type} #${ctx.attempt}`);
        await next(ctx);
        trace.push(`${name} after`);
      };
    await f.worker({
      middleware: [step('outer'), step('inner')],
      handlers: [
        defineHandler({
          type: 'order.placed',
          async handle() {
            trace.push('handler');
          },
        }),
      ],
    });
    const env = event('order.placed', {});
    await f.publish(env);
    await f.drained();

    expect(trace).toEqual([
      'outer before order.placed #1',
      'inner before order.placed #1',
      'handler',
      'inner after',
      'outer after',
    ]);
    expect(await f.store.isProcessed('test', env.id)).toBe(true);
  });

  it('changes the outcome: a failure the step turns into NonRetryableError is dead-lettered at once', async () => {
    await using f = fixture();
    let calls = 0;
    const declinedIsFinal: HandlerMiddleware = (next) => async (ctx) => {
      try {
        await next(ctx);
      } catch (err) {
        if (err instanceof Error && err.message === 'card declined') {
          throw new NonRetryableError('card declined: not retried');
        }
        throw err;
      }
    };
    await f.worker({
      middleware: [declinedIsFinal],
      handlers: [
        defineHandler({
          type: 'charge',
          async handle() {
            calls++;
            throw new Error('card declined'); // alone: retried with backoff
          },
        }),
      ],
    });
    const env = event('charge', {});
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');

    expect(calls).toBe(1);
    expect(letter).toMatchObject({
      reason: 'card declined: not retried',
      attempts: 1,
      lastError: { code: 'NON_RETRYABLE' },
    });
  });

  it('passes its own context on: the timeout example aborts the handler, which is retried later', async () => {
    await using f = fixture();
    const attempts: number[] = [];
    await f.worker({
      middleware: [timeout(30, 10)],
      handlers: [
        defineHandler({
          type: 'slow',
          async handle(_event, ctx) {
            attempts.push(ctx.attempt);
            if (ctx.attempt > 1) return;
            await new Promise<void>((_, reject) => {
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), {
                once: true,
              });
            });
          },
        }),
      ],
    });
    const env = event('slow', {});
    await f.publish(env);
    await waitFor(() => f.store.isProcessed('test', env.id), { what: 'the second attempt' });

    expect(attempts).toEqual([1, 2]);
    expect(f.logs.find((l) => l.msg === 'retry scheduled')).toMatchObject({
      code: 'RETRY_LATER',
      delayMs: 10,
    });
  });

  it('never sees a duplicate: the record guard answers it before the steps', async () => {
    await using f = fixture({ dedupeWindowMs: false }); // the broker lets the second copy in
    let stepRuns = 0;
    const counting: HandlerMiddleware = (next) => async (ctx) => {
      stepRuns++;
      await next(ctx);
    };
    await f.worker({
      middleware: [counting],
      handlers: [defineHandler({ type: 'once', async handle() {} })],
    });
    const env = event('once', {});
    await f.publish(env);
    await f.drained();
    await f.publish(env);
    await f.drained();

    expect(stepRuns).toBe(1);
    expect(f.logs.filter((l) => l.msg.startsWith('duplicate suppressed'))).toHaveLength(1);
  });

  it('refuses a middleware entry that is not a function', async () => {
    await using f = fixture();
    expect(() =>
      createWorker({
        transport: f.transport,
        records: f.store,
        handlers: [defineHandler({ type: 'x', async handle() {} })],
        middleware: [{} as HandlerMiddleware],
      }),
    ).toThrow(ConfigError);
  });
});
