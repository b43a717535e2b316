import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/contracts/transport.js';
import { createMemoryStore } from '../../src/memory/store.js';
import { silentLogger } from '../../src/observability/logger.js';
import { createHandlerContext } from '../../src/worker/context.js';
import { createJob } from '../../src/worker/job.js';
import { event } from './fixture.js';

const contextOf = () => {
  const delivery: Delivery = {
    envelope: event('order.placed', {}),
    attempt: 2,
    signal: new AbortController().signal,
    ack: async () => {},
    retry: async () => {},
  };
  const job = createJob(delivery, undefined, silentLogger, Date.now() + 1_000, 1_000);
  job.lease = { token: 'lease-1' };
  const deps = { records: createMemoryStore(), lockMs: 1_000, now: Date.now };
  return { job, ctx: createHandlerContext(job, deps) };
};

describe('the handler context', () => {
  it('is a plain object with its fields in order, the signal read from the job', () => {
    const { job, ctx } = contextOf();
    expect(Object.getPrototypeOf(ctx)).toBe(Object.prototype);
    expect(Object.keys(ctx)).toEqual([
      'envelope',
      'attempt',
      'signal',
      'idempotencyKey',
      'renewLock',
      'log',
      'processingToken',
      'note',
    ]);
    expect(ctx.attempt).toBe(2);
    expect(ctx.processingToken).toBe('lease-1');
    expect(ctx.signal).toBe(job.abort.signal);
    ctx.note('stale');
    expect(job.note).toBe('stale');
  });

  it('keeps working when a step copies it ({ ...ctx }) or derives from it', () => {
    const { job, ctx } = contextOf();
    const copy = { ...ctx };
    expect(copy.signal).toBe(job.abort.signal);
    expect(copy.idempotencyKey('refund')).toBe(ctx.idempotencyKey('refund'));
    const { note } = copy;
    note('copied');
    expect(job.note).toBe('copied');
    expect((Object.create(ctx) as typeof ctx).signal).toBe(job.abort.signal);
  });
});
