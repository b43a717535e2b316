import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../src/worker/index.js';
import { counted, event, fixture, sleep, waitFor, withUnextendableLocks } from './fixture.js';

describe('processed-guard and locks', () => {
  it('runs the effect once for a duplicate publish the broker does not dedupe', async () => {
    await using f = fixture({ dedupeWindowMs: false });
    const effects: string[] = [];
    await f.worker({
      lockMs: 300,
      handlers: [
        defineHandler({
          type: 'order.created',
          async handle(_e, ctx) {
            await sleep(30);
            effects.push(ctx.envelope.id);
          },
        }),
      ],
    });
    const env = event('order.created', { total: 1 });
    await f.publish(env);
    await f.publish(env); // delivered concurrently: the second sees the lease busy
    await f.drained();
    await f.publish(env); // delivered after completion: already processed

    await f.drained();
    expect(effects).toEqual([env.id]);
    expect(await counted(f.metrics.duplicatesSuppressed, { layer: 'worker', source: 'test' })).toBe(
      2,
    );
    expect(await counted(f.metrics.retries, { code: 'BUSY' })).toBeGreaterThanOrEqual(1);
  });

  it('redelivery after lock expiry while the first attempt still runs: busy, effect once', async () => {
    await using f = fixture();
    const effects: number[] = [];
    const attempts: number[] = [];
    let firstSignal: AbortSignal | undefined;
    await f.worker({
      transport: withUnextendableLocks(f.transport),
      lockMs: 120,
      heartbeatMs: 30, // keeps the processing lease; the transport lock cannot be kept
      retry: { maxAttempts: 2 }, // busy retries must never dead-letter, whatever the attempt
      handlers: [
        defineHandler({
          type: 'slow',
          async handle(_e, ctx) {
            attempts.push(ctx.attempt);
            firstSignal ??= ctx.signal;
            await sleep(600); // ignores its signal, as a careless handler would
            effects.push(ctx.attempt);
          },
        }),
      ],
    });
    await f.publish(event('slow', {}));
    await f.drained();

    expect(effects).toEqual([1]);
    expect(attempts).toEqual([1]);
    expect(firstSignal?.aborted).toBe(true);
    expect(firstSignal?.reason).toMatchObject({ code: 'LOCK_LOST' });
    expect(await counted(f.metrics.retries, { code: 'BUSY' })).toBeGreaterThanOrEqual(1);
    expect(await counted(f.metrics.duplicatesSuppressed, { layer: 'worker' })).toBe(1);
    expect(await f.transport.deadLetters.count()).toBe(0);
  });

  it('heartbeat keeps a long handler its lock: no redelivery, signal never aborted', async () => {
    await using f = fixture();
    const attempts: number[] = [];
    let signal: AbortSignal | undefined;
    await f.worker({
      lockMs: 100, // heartbeat every 33 ms by default
      handlers: [
        defineHandler({
          type: 'long',
          async handle(_e, ctx) {
            attempts.push(ctx.attempt);
            signal = ctx.signal;
            await sleep(500);
          },
        }),
      ],
    });
    await f.publish(event('long', {}));
    await f.drained();

    expect(attempts).toEqual([1]);
    expect(signal?.aborted).toBe(false);
    expect(await counted(f.metrics.processed)).toBe(1);
    expect(await counted(f.metrics.retries)).toBe(0);
  });

  it('dead-letters on arrival when attempt > maxAttempts, without running the handler', async () => {
    await using f = fixture();
    const attempts: number[] = [];
    await f.worker({
      lockMs: 80,
      heartbeatMs: false, // a crash loop: every attempt loses its lock, nothing is settled
      retry: { maxAttempts: 2 },
      concurrency: 4,
      handlers: [
        defineHandler({
          type: 'hangs',
          async handle(_e, ctx) {
            attempts.push(ctx.attempt);
            await new Promise((_, reject) => {
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
            });
          },
        }),
      ],
    });
    await f.publish(event('hangs', {}));
    await waitFor(() => f.transport.deadLetters.count(), { what: 'a dead letter' });

    const [letter] = await f.transport.deadLetters.list();
    expect(attempts).toEqual([1, 2]);
    expect(letter?.reason).toBe('attempts exhausted');
    expect(letter?.attempts).toBeGreaterThan(2);
    expect(await counted(f.metrics.deadLettered, { code: 'ATTEMPTS_EXHAUSTED' })).toBe(1);
  });

  it('ctx.extendLock holds the lock beyond lockMs without a heartbeat', async () => {
    await using f = fixture();
    const attempts: number[] = [];
    await f.worker({
      lockMs: 80,
      heartbeatMs: false,
      handlers: [
        defineHandler({
          type: 'extends',
          async handle(_e, ctx) {
            attempts.push(ctx.attempt);
            await ctx.extendLock(1_000);
            await sleep(300);
          },
        }),
      ],
    });
    await f.publish(event('extends', {}));
    await f.drained();
    expect(attempts).toEqual([1]);
    expect(await counted(f.metrics.processed)).toBe(1);
  });
});
