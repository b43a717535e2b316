import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createWorker, defineHandler } from '../../src/worker/index.js';
import { counted, event, fixture, sleep, waitFor } from './fixture.js';

describe('concurrency and shutdown', () => {
  it('never runs more handlers at once than concurrency', async () => {
    await using f = fixture();
    let running = 0;
    let peak = 0;
    await f.worker({
      concurrency: 3,
      handlers: [
        defineHandler({
          type: 'job',
          async handle() {
            running++;
            peak = Math.max(peak, running);
            await sleep(5 + Math.floor(Math.random() * 10));
            running--;
          },
        }),
      ],
    });
    await f.publish(...Array.from({ length: 30 }, (_, i) => event('job', { i }, { key: `k${i}` })));
    await f.drained();
    expect(await counted(f.metrics.processed)).toBe(30);
    expect(peak).toBe(3);
  });

  it('close() waits for in-flight handlers to finish and acks them', async () => {
    await using f = fixture();
    let started = false;
    let finished = false;
    const worker = await f.worker({
      shutdownTimeoutMs: 5_000,
      handlers: [
        defineHandler({
          type: 'slow',
          async handle(_e, ctx) {
            started = true;
            await sleep(200);
            finished = !ctx.signal.aborted;
          },
        }),
      ],
    });
    const env = event('slow', {});
    await f.publish(env);
    await waitFor(() => started);
    await worker.close();

    expect(finished).toBe(true);
    expect(await f.store.isProcessed('test', env.id)).toBe(true);
    expect(f.transport.broker.depth(f.transport.queue)).toBe(0);
    await expect(worker.start()).rejects.toThrow(ConfigError);
  });

  it('aborts the handler signal after shutdownTimeoutMs and does not ack the unfinished work', async () => {
    await using f = fixture();
    let started = false;
    const t0 = Date.now();
    const worker = await f.worker({
      shutdownTimeoutMs: 100,
      retry: { maxAttempts: 1 }, // an interrupted attempt is not a failure: no dead letter
      handlers: [
        defineHandler({
          type: 'stuck',
          async handle(_e, ctx) {
            started = true;
            await new Promise((_, reject) =>
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
            );
          },
        }),
      ],
    });
    const env = event('stuck', {});
    await f.publish(env);
    await waitFor(() => started);
    const closing = Date.now();
    await worker.close();
    const abortedAfterMs = Date.now() - closing;

    expect(abortedAfterMs).toBeGreaterThanOrEqual(95);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await f.store.isProcessed('test', env.id)).toBe(false);
    expect(await f.deadLetters()).toHaveLength(0);
    // The lease was released, not failed: back to enqueued, no error kept.
    expect(await f.store.get('test', env.id)).toMatchObject({
      state: 'enqueued',
      lastError: undefined,
    });
    expect(f.transport.broker.depth(f.transport.queue)).toBe(1);
    expect(await counted(f.metrics.retries, { code: 'SHUTDOWN' })).toBe(1);

    // The next worker picks the event up and completes it.
    const done: number[] = [];
    await f.worker({
      handlers: [
        defineHandler({
          type: 'stuck',
          async handle(_e, ctx) {
            done.push(ctx.attempt);
          },
        }),
      ],
    });
    await f.drained();
    expect(done).toEqual([2]);
  });

  it('start() and close() are idempotent; close() before start() is a no-op', async () => {
    await using f = fixture();
    const calls: string[] = [];
    const handlers = [
      defineHandler({
        type: 'x',
        async handle() {
          calls.push('x');
        },
      }),
    ];
    const worker = await f.worker({ handlers });
    await Promise.all([worker.start(), worker.start()]);
    await f.publish(event('x', {}));
    await f.drained();
    expect(calls).toEqual(['x']);
    await Promise.all([worker.close(), worker.close(), worker[Symbol.asyncDispose]()]);

    const never = createWorker({ transport: f.transport, records: f.store, handlers });
    await never.close();
    await expect(never.start()).rejects.toThrow(ConfigError);
  });

  it('await using closes the worker at the end of its scope; the transport and store stay open', async () => {
    await using f = fixture();
    const handled: string[] = [];
    const handlers = [
      defineHandler({
        type: 'scoped',
        async handle(_event, ctx) {
          handled.push(ctx.envelope.id);
        },
      }),
    ];
    const first = event('scoped', {});
    {
      await using worker = createWorker({ transport: f.transport, records: f.store, handlers });
      await worker.start();
      await f.publish(first);
      await waitFor(() => handled.length === 1, { what: 'the first event' });
    }
    const second = event('scoped', {});
    await f.publish(second); // the transport is still open
    await sleep(50);
    expect(handled).toEqual([first.id]);
    expect(f.transport.broker.depth(f.transport.queue)).toBe(1);
    expect(await f.store.isProcessed('test', first.id)).toBe(true); // the store too
  });
});
