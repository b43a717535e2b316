import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AlreadyProcessedError, ConfigError, NonRetryableError } from '../../src/errors.js';
import {
  createWorker,
  defineHandler,
  deriveIdempotencyKey,
  type HandlerContext,
} from '../../src/worker/index.js';
import { comparable, counted, event, fixture } from './fixture.js';

const payment = z.object({ amount: z.number(), currency: z.string() });

describe('worker outcomes', () => {
  it('runs the handler with the parsed event, marks it processed, acks, logs one line', async () => {
    await using f = fixture();
    const seen: { event: unknown; ctx: HandlerContext }[] = [];
    await f.worker({
      handlers: [
        defineHandler({
          type: 'payment.succeeded',
          schema: payment,
          async handle(e, ctx) {
            const cents: number = e.amount * 100; // typed by the schema
            expect(cents).toBe(4200);
            seen.push({ event: e, ctx });
          },
        }),
      ],
    });
    const env = event('payment.succeeded', { amount: 42, currency: 'eur', extra: true });
    await f.publish(env);
    await f.drained();

    expect(seen).toHaveLength(1);
    expect(seen[0]?.event).toEqual({ amount: 42, currency: 'eur' });
    expect(seen[0]?.ctx.attempt).toBe(1);
    expect(seen[0]?.ctx.envelope.id).toBe(env.id);
    expect(seen[0]?.ctx.processingToken).not.toBe('');
    expect(await f.store.isProcessed('test', env.id)).toBe(true);
    expect(await counted(f.metrics.processed, { type: 'payment.succeeded' })).toBe(1);
    expect(await f.deadLetters()).toHaveLength(0);
    const outcomeLines = f.logs.filter((l) => l.id === env.id);
    expect(outcomeLines.map((l) => l.msg)).toEqual(['processed']);
    expect(outcomeLines[0]).toMatchObject({
      type: 'payment.succeeded',
      source: 'test',
      attempt: 1,
    });
  });

  it('retries with exponential backoff, then succeeds', async () => {
    await using f = fixture();
    const at: number[] = [];
    await f.worker({
      retry: { baseDelayMs: 40, maxDelayMs: 1_000 },
      random: () => 0.999_999, // full jitter at its ceiling: 40 ms, then 80 ms
      handlers: [
        defineHandler({
          type: 'flaky',
          async handle(_e, ctx) {
            at.push(Date.now());
            if (ctx.attempt < 3) throw new Error(`downstream 503 on attempt ${ctx.attempt}`);
          },
        }),
      ],
    });
    await f.publish(event('flaky', {}));
    await f.drained();

    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(39);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(79);
    expect(await counted(f.metrics.retries, { type: 'flaky', code: 'INTERNAL' })).toBe(2);
    expect(await counted(f.metrics.processed)).toBe(1);
    expect(f.logs.filter((l) => l.msg === 'retry scheduled')).toHaveLength(2);
  });

  it('dead-letters after maxAttempts with reason, attempts and the last error', async () => {
    await using f = fixture();
    let calls = 0;
    await f.worker({
      retry: { maxAttempts: 3, baseDelayMs: 1 },
      handlers: [
        defineHandler({
          type: 'doomed',
          async handle(_e, ctx) {
            calls++;
            throw new TypeError(`broken on attempt ${ctx.attempt}`);
          },
        }),
      ],
    });
    const env = event('doomed', {});
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');

    expect(calls).toBe(3);
    expect(letter).toMatchObject({
      reason: 'attempts exhausted',
      attempts: 3,
      lastError: { code: 'INTERNAL', name: 'TypeError', message: 'broken on attempt 3' },
    });
    expect(comparable(letter.envelope)).toEqual(comparable(env)); // kept for a redrive
    await f.drained(); // the broker message is acked: the record holds the dead letter
    expect(await f.store.isProcessed('test', env.id)).toBe(false);
    expect(await counted(f.metrics.deadLettered, { type: 'doomed', code: 'INTERNAL' })).toBe(1);
    expect(f.logs.filter((l) => l.msg.startsWith('dead-lettered'))).toHaveLength(1);
  });

  it('dead-letters a NonRetryableError on attempt 1 and releases the lease', async () => {
    await using f = fixture();
    let calls = 0;
    await f.worker({
      handlers: [
        defineHandler({
          type: 'refund',
          async handle() {
            calls++;
            throw new NonRetryableError('charge already refunded');
          },
        }),
      ],
    });
    const env = event('refund', {});
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');

    expect(calls).toBe(1);
    expect(letter).toMatchObject({
      reason: 'charge already refunded',
      attempts: 1,
      lastError: { code: 'NON_RETRYABLE', name: 'NonRetryableError' },
    });
    await f.drained();
    // Dead-lettered, not completed: only a redrive (its header) acquires it again.
    const begin = (redrive?: string) => f.store.begin(env, { leaseMs: 1000, attempt: 1, redrive });
    expect(await begin()).toEqual({ status: 'dead-lettered' });
    expect(await begin('cli:ops')).toMatchObject({ status: 'acquired' });
  });

  it('dead-letters a schema failure at once, with the issues, without running the handler', async () => {
    await using f = fixture();
    let calls = 0;
    await f.worker({
      handlers: [
        defineHandler({
          type: 'payment.succeeded',
          schema: payment,
          async handle() {
            calls++;
          },
        }),
      ],
    });
    const env = event('payment.succeeded', { amount: 'lots', currency: 'eur' });
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');

    expect(calls).toBe(0);
    expect(letter.attempts).toBe(1);
    expect(letter.reason).toMatch(/^schema: amount: /);
    expect(letter.lastError?.code).toBe('SCHEMA');
    expect(comparable(letter.envelope)).toEqual(comparable(env));
    await f.drained();
    expect(await counted(f.metrics.deadLettered, { code: 'SCHEMA' })).toBe(1);
  });

  it('dead-letters a payload that is not JSON at once', async () => {
    await using f = fixture();
    await f.worker({ handlers: [defineHandler({ type: 'raw', async handle() {} })] });
    const env = { ...event('raw', {}), payload: new TextEncoder().encode('<xml/>') };
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');
    expect(letter).toMatchObject({ attempts: 1, lastError: { code: 'SCHEMA' } });
    expect(letter.reason).toMatch(/not valid JSON/);
  });

  it('acks an AlreadyProcessedError as a duplicate', async () => {
    await using f = fixture();
    await f.worker({
      handlers: [
        defineHandler({
          type: 'tx',
          async handle(_e, ctx) {
            throw new AlreadyProcessedError(ctx.envelope.source, ctx.envelope.id);
          },
        }),
      ],
    });
    const env = event('tx', {});
    await f.publish(env);
    await f.drained();
    expect(await f.deadLetters()).toHaveLength(0);
    expect(await counted(f.metrics.duplicatesSuppressed, { layer: 'worker' })).toBe(1);
    expect(await f.store.isProcessed('test', env.id)).toBe(true);
  });

  it('dead-letters unknown types by default, or acks them with unknownType: ack', async () => {
    await using f = fixture({ queue: 'dl' });
    await f.worker({ handlers: [defineHandler({ type: 'known', async handle() {} })] });
    const unknown = event('unknown.type', {});
    await f.publish(unknown);
    const letter = await f.recordIn(unknown.id, 'dead-lettered');
    expect(letter.reason).toBe('no handler for type "unknown.type"');

    await using g = fixture({ queue: 'ack' });
    await g.worker({
      unknownType: 'ack',
      handlers: [defineHandler({ type: 'known', async handle() {} })],
    });
    await g.publish(event('unknown.type', {}));
    await g.drained();
    expect(await g.deadLetters()).toHaveLength(0);
    expect(g.logs.some((l) => l.msg.startsWith('acked without running'))).toBe(true);
  });

  it('gives a stable idempotency key per action across attempts', async () => {
    await using f = fixture();
    const keys: string[] = [];
    const other: string[] = [];
    await f.worker({
      retry: { baseDelayMs: 1 },
      handlers: [
        defineHandler({
          type: 'charge',
          async handle(_e, ctx) {
            keys.push(ctx.idempotencyKey('create-charge'));
            other.push(ctx.idempotencyKey('send-receipt'));
            if (ctx.attempt < 3) throw new Error('timeout');
          },
        }),
      ],
    });
    const env = event('charge', {});
    await f.publish(env);
    await f.drained();

    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^onceflow-[0-9a-f]{64}$/);
    expect(keys[0]!.length).toBeLessThanOrEqual(255);
    expect(other[0]).not.toBe(keys[0]);
    expect(keys[0]).toBe(deriveIdempotencyKey({ source: 'test', id: env.id }, 'create-charge'));
    expect(deriveIdempotencyKey({ source: 'test', id: 'a:b' }, 'c')).not.toBe(
      deriveIdempotencyKey({ source: 'test', id: 'a' }, 'b:c'),
    );
  });

  it('refuses an invalid config with a ConfigError, before any I/O', async () => {
    await using f = fixture({ lockMs: 100 });
    const h = defineHandler({ type: 't', async handle() {} });
    const base = { transport: f.transport, records: f.store };
    expect(() => createWorker({ ...base, handlers: [h, h] })).toThrow(ConfigError);
    expect(() => createWorker({ ...base, handlers: [h], heartbeatMs: 100 })).toThrow(
      /heartbeatMs must be below the transport's lock.ms \(100\)/,
    );
    expect(() => createWorker({ ...base, handlers: [h], records: {} as typeof f.store })).toThrow(
      /must be a RecordStore\n {2}→ at records/,
    );
    expect(() => createWorker({ ...base, handlers: [h], concurrency: 0 })).toThrow(ConfigError);
    expect(() => createWorker({ ...base, handlers: [] })).toThrow(ConfigError);
  });

  it("refuses retry.maxAttempts at or above the transport's deliveryLimit", async () => {
    await using f = fixture({ deliveryLimit: 5 });
    const base = {
      transport: f.transport,
      records: f.store,
      handlers: [defineHandler({ type: 't', async handle() {} })],
    };
    const limit =
      /retry.maxAttempts \((\d+)\) must be below the memory transport's deliveryLimit \(5\)/;
    expect(() => createWorker({ ...base, retry: { maxAttempts: 5 } })).toThrow(limit);
    expect(() => createWorker({ ...base, retry: { maxAttempts: 6 } })).toThrow(ConfigError);
    expect(() => createWorker(base)).toThrow(/retry.maxAttempts \(8\)/); // the default, too
    expect(() => createWorker({ ...base, retry: { maxAttempts: 4 } })).not.toThrow();
  });
});
