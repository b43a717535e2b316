import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../src/worker/index.js';
import {
  counted,
  event,
  fixture,
  lockCallsInTime,
  sleep,
  waitFor,
  withLockCalls,
  withUnrenewableLocks,
} from './fixture.js';

describe('record guard and locks', () => {
  it('runs the effect once for a duplicate publish the broker does not dedupe', async () => {
    await using f = fixture({ dedupeWindowMs: false, lockMs: 300 });
    const effects: string[] = [];
    await f.worker({
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
    await using f = fixture({ lockMs: 120 });
    const effects: number[] = [];
    const attempts: number[] = [];
    let firstSignal: AbortSignal | undefined;
    await f.worker({
      transport: withUnrenewableLocks(f.transport),
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
    expect(await f.deadLetters()).toHaveLength(0);
  });

  it('heartbeat keeps a long handler its lock: no redelivery, signal never aborted', async () => {
    // A run is judged only when each heartbeat renewal, and the ack, came while the lock was
    // surely held: a stall of the machine before the first (between the delivery and the
    // heartbeat's start) or between two may rightly have let the lock go. Such a run is run
    // again, on a fresh fixture.
    for (let run = 1; ; run++) {
      await using f = fixture({ lockMs: 200 }); // heartbeat every 66 ms by default
      const calls = lockCallsInTime(200);
      const attempts: number[] = [];
      let signal: AbortSignal | undefined;
      await f.worker({
        transport: withLockCalls(f.transport, () => calls.call()),
        handlers: [
          defineHandler({
            type: 'long',
            async handle(_e, ctx) {
              attempts.push(ctx.attempt);
              signal = ctx.signal;
              await sleep(600); // three lock lengths
            },
          }),
        ],
      });
      calls.start();
      await f.publish(event('long', {}));
      await f.drained();
      if (!calls.inTime && run < 5) continue;
      expect(calls.inTime, 'a run whose renewals and ack all came in time').toBe(true);
      expect(attempts).toEqual([1]);
      expect(signal?.aborted).toBe(false);
      expect(await counted(f.metrics.processed)).toBe(1);
      expect(await counted(f.metrics.retries)).toBe(0);
      return;
    }
  });

  it('dead-letters on arrival when attempt > maxAttempts, without running the handler', async () => {
    // Each attempt's lease is taken a moment after its delivery, so it ends a moment after the
    // lock; the next attempt waits that out (up to lockMs / 3) rather than retrying as busy. A
    // stall of the machine between a delivery and its lease leaves more than that, and a busy
    // retry then shifts the attempt numbers: such a run is run again, on a fresh fixture.
    for (let run = 1; ; run++) {
      await using f = fixture({ lockMs: 80 });
      const attempts: number[] = [];
      let unhang = () => {};
      const hung = new Promise<void>((resolve) => {
        unhang = resolve;
      });
      await f.worker({
        heartbeatMs: false, // a crash loop: every attempt loses its lock and lease, none settles
        retry: { maxAttempts: 2 },
        concurrency: 4,
        handlers: [
          defineHandler({
            type: 'hangs',
            async handle(_e, ctx) {
              attempts.push(ctx.attempt);
              await hung; // as a process that died inside the handler: no outcome at all
              throw new Error('too late');
            },
          }),
        ],
      });
      const env = event('hangs', {});
      try {
        await f.publish(env);
        const letter = await f.recordIn(env.id, 'dead-lettered');
        const busy = await counted(f.metrics.retries, { code: 'BUSY' });
        if (busy > 0 && run < 5) continue;
        expect(busy, 'a run without a busy retry: each of 5 had a stall before a lease').toBe(0);
        expect(attempts).toEqual([1, 2]);
        expect(letter.reason).toBe('attempts exhausted');
        expect(letter.attempts).toBe(3);
        expect(await counted(f.metrics.deadLettered, { code: 'ATTEMPTS_EXHAUSTED' })).toBe(1);
        await f.drained();
        unhang(); // the hung attempts end late: their outcomes change nothing on the record
        await sleep(20);
        expect(await f.store.get('test', env.id)).toMatchObject({
          state: 'dead-lettered',
          attempts: 3,
        });
        return;
      } finally {
        unhang(); // else closing the worker waits for the hung attempts
      }
    }
  });

  it('ctx.renewLock holds the lock and the lease beyond lock.ms without a heartbeat', async () => {
    // A run is judged only when each renewal came while the lock it renewed was surely held: a
    // stall of the machine between two of them may rightly have let the lock go. Such a run is
    // run again, on a fresh fixture.
    for (let run = 1; ; run++) {
      await using f = fixture({ lockMs: 200 });
      const calls = lockCallsInTime(200);
      const attempts: number[] = [];
      let signal: AbortSignal | undefined;
      await f.worker({
        transport: withLockCalls(f.transport, () => calls.call()),
        heartbeatMs: false,
        handlers: [
          defineHandler({
            type: 'renews',
            async handle(_e, ctx) {
              attempts.push(ctx.attempt);
              signal = ctx.signal;
              for (let i = 0; i < 12; i++) {
                await sleep(50); // 600 ms in all, three lock lengths
                await ctx.renewLock();
              }
            },
          }),
        ],
      });
      const env = event('renews', {});
      calls.start();
      await f.publish(env);
      await f.drained();
      if (!calls.inTime && run < 5) continue;
      expect(calls.inTime, 'a run whose renewals and ack all came in time').toBe(true);
      expect(attempts).toEqual([1]);
      expect(signal?.aborted).toBe(false);
      expect(await counted(f.metrics.processed)).toBe(1);
      expect((await f.store.get('test', env.id))?.state).toBe('completed');
      return;
    }
  });

  it('ctx.renewLock rejects with LockLostError once the lock expired', async () => {
    await using f = fixture({ lockMs: 60 });
    let renewal: unknown;
    await f.worker({
      heartbeatMs: false,
      retry: { baseDelayMs: 1 },
      handlers: [
        defineHandler({
          type: 'late',
          async handle(_e, ctx) {
            if (ctx.attempt > 1) return;
            await sleep(150); // past lock.ms: the message went back to the queue
            renewal = await ctx.renewLock().catch((err: unknown) => err);
          },
        }),
      ],
    });
    await f.publish(event('late', {}));
    await waitFor(() => renewal, { what: 'the late renewal' });
    expect(renewal).toMatchObject({ code: 'LOCK_LOST' });
  });

  it('on a delivery that cannot renew its lock, ctx.renewLock still renews the lease: effect once', async () => {
    await using f = fixture({ lockMs: 100 });
    const attempts: number[] = [];
    const effects: number[] = [];
    await f.worker({
      transport: withUnrenewableLocks(f.transport),
      heartbeatMs: false,
      handlers: [
        defineHandler({
          type: 'lease',
          async handle(_e, ctx) {
            attempts.push(ctx.attempt);
            for (let i = 0; i < 6; i++) {
              await sleep(50);
              await ctx.renewLock(); // nothing to renew on the delivery; the lease is renewed
            }
            effects.push(ctx.attempt);
          },
        }),
      ],
    });
    await f.publish(event('lease', {}));
    await f.drained();
    // The transport lock expired at 100 ms and the message came back: the lease said busy.
    expect(attempts).toEqual([1]);
    expect(effects).toEqual([1]);
    expect(await counted(f.metrics.retries, { code: 'BUSY' })).toBeGreaterThanOrEqual(1);
  });
});
