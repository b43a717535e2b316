import { describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/errors.js';
import { decodeDelivery, UNDECODABLE } from '../../src/kit.js';
import { defineHandler } from '../../src/worker/index.js';
import { comparable, counted, event, fixture } from './fixture.js';

const states = (record: { history: readonly { state: string }[] } | undefined) =>
  record?.history.map((h) => h.state);

describe('the worker writes every outcome on the event record', () => {
  it('completion: completed, one history entry per change, by the consumer', async () => {
    await using f = fixture();
    await f.worker({
      consumer: 'worker-a',
      handlers: [defineHandler({ type: 'order.placed', async handle() {} })],
    });
    // One published by your own service (never passed a receiver), one claimed by a receiver.
    const direct = event('order.placed', {});
    const received = event('order.placed', {});
    const claim = await f.store.claim(received, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error('setup');
    await f.publish(direct, received);
    await f.store.markEnqueued('test', received.id, claim.token);

    const record = await f.recordIn(direct.id, 'completed');
    expect(record).toMatchObject({ attempts: 1, consumer: 'worker-a', type: 'order.placed' });
    expect(record.history).toEqual([
      { at: expect.any(String), state: 'processing', attempt: 1, actor: 'worker-a' },
      { at: expect.any(String), state: 'completed', attempt: 1, actor: 'worker-a' },
    ]);
    const claimed = await f.recordIn(received.id, 'completed');
    expect(claimed.history.map((h) => [h.state, h.actor])).toEqual([
      ['received', 'receiver'],
      ['enqueued', 'receiver'],
      ['processing', 'worker-a'],
      ['completed', 'worker-a'],
    ]);
    await f.drained();
  });

  it('a retry: retry-scheduled with the last error and the next attempt time, then completed', async () => {
    await using f = fixture();
    const env = event('flaky', {});
    // Set by the first attempt only: the record may be read after the second has begun.
    let failedAt = 0;
    await f.worker({
      consumer: 'worker-a',
      retry: { baseDelayMs: 300, maxDelayMs: 300, jitter: 'none' },
      handlers: [
        defineHandler({
          type: 'flaky',
          async handle(_e, ctx) {
            if (ctx.attempt > 1) return;
            failedAt = Date.now();
            throw new TypeError('downstream 503');
          },
        }),
      ],
    });
    await f.publish(env);
    const scheduled = await f.recordIn(env.id, 'retry-scheduled');
    expect(scheduled).toMatchObject({
      attempts: 1,
      lastError: { code: 'INTERNAL', name: 'TypeError', message: 'downstream 503' },
    });
    const next = Date.parse(scheduled.nextAttemptAt ?? '');
    expect(next - failedAt).toBeGreaterThanOrEqual(295);
    expect(next - failedAt).toBeLessThan(1_300); // the delay, plus the time to record the failure
    expect(scheduled.history.at(-1)).toMatchObject({
      state: 'retry-scheduled',
      attempt: 1,
      code: 'INTERNAL',
      actor: 'worker-a',
    });

    const done = await f.recordIn(env.id, 'completed');
    expect(done.attempts).toBe(2);
    expect(done.nextAttemptAt).toBeUndefined();
    expect(states(done)).toEqual(['processing', 'retry-scheduled', 'processing', 'completed']);
    await f.drained();
  });

  it('exhausted retries: dead-lettered with reason, attempts, last error and the envelope; the message is acked', async () => {
    await using f = fixture();
    const env = event('doomed', { amount: 1 });
    await f.worker({
      retry: { maxAttempts: 3, baseDelayMs: 1 },
      handlers: [
        defineHandler({
          type: 'doomed',
          async handle(_e, ctx) {
            throw new Error(`broken on attempt ${ctx.attempt}`);
          },
        }),
      ],
    });
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');
    expect(letter).toMatchObject({
      reason: 'attempts exhausted',
      attempts: 3,
      lastError: { code: 'INTERNAL', message: 'broken on attempt 3' },
    });
    expect(comparable(letter.envelope)).toEqual(comparable(env));
    expect(states(letter)).toEqual([
      'processing',
      'retry-scheduled',
      'processing',
      'retry-scheduled',
      'processing',
      'dead-lettered',
    ]);
    expect(letter.history.at(-1)).toMatchObject({ attempt: 3, code: 'INTERNAL' });
    await f.drained();
    expect(f.transport.broker.depth(f.transport.queue)).toBe(0);
  });

  it('a copy of a dead-lettered event delivered again is acked without running the handler', async () => {
    await using f = fixture();
    const env = event('refund', {});
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
    await f.publish(env);
    const letter = await f.recordIn(env.id, 'dead-lettered');
    await f.drained();
    // The same event again, past the broker's dedupe (another key), as a re-publish would be.
    await f.transport.publish([{ envelope: env, dedupeKey: `${env.id}:again` }]);
    await f.drained();

    expect(calls).toBe(1);
    expect(await f.store.get('test', env.id)).toEqual(letter); // nothing changed
    expect(f.logs.filter((l) => l.msg.includes('already holds it as a dead letter'))).toHaveLength(
      1,
    );
    expect(await counted(f.metrics.deadLettered)).toBe(1);
  });

  it('an undecodable message: a dead letter with reason undecodable and its raw bytes as payload', async () => {
    await using f = fixture();
    let calls = 0;
    await f.worker({
      unknownType: 'ack', // even so: an undecodable message is never dropped
      handlers: [
        defineHandler({
          type: 'anything',
          async handle() {
            calls++;
          },
        }),
      ],
    });
    const undecodable = decodeDelivery(new Uint8Array([0xff, 0x00]));
    await f.publish(undecodable);

    const letter = await f.recordIn(undecodable.id, 'dead-lettered', {
      source: UNDECODABLE.source,
    });
    expect(letter).toMatchObject({
      source: 'onceflow',
      type: 'onceflow.undecodable',
      state: 'dead-lettered',
      attempts: 1,
    });
    expect(letter.reason).toMatch(/^undecodable: ./);
    expect([...(letter.envelope?.payload ?? [])]).toEqual([0xff, 0x00]);
    await f.drained();
    expect(calls).toBe(0);
    expect(await counted(f.metrics.deadLettered, { code: 'WIRE_FORMAT' })).toBe(1);
  });
});
