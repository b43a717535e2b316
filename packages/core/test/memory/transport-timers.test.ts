import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Delivery } from '../../src/contracts/transport.js';
import { createEnvelope } from '../../src/envelope.js';
import { LockLostError } from '../../src/errors.js';
import { createMemoryTransport } from '../../src/memory/transport.js';

const env = (id: string, key?: string) =>
  createEnvelope({ id, source: 's', type: 't', key, payload: { id } });

/** Lets started handlers run: they begin from `setImmediate`, which stays real here. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/**
 * A handler that holds each delivery until its lock is lost (then returns without settling),
 * the deliveries it was given, and `release`, after which it acks (so the transport can close).
 */
function holding() {
  const seen: Delivery[] = [];
  const waiting = new Set<() => void>();
  let released = false;
  const handler = async (d: Delivery) => {
    seen.push(d);
    if (!released) {
      await new Promise<void>((resolve) => {
        waiting.add(resolve);
        d.signal.addEventListener('abort', () => resolve());
      });
    }
    if (released && !d.signal.aborted) await d.ack();
  };
  const release = async () => {
    released = true;
    for (const resolve of waiting) resolve();
    await settle();
  };
  return { handler, seen, release };
}

// An idle queue holds no timer, so a process whose work is done can exit; a busy one holds one,
// for the next lock end or due delay, and fires it on time.
describe('memory transport timers', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds no timer for messages nobody consumes, nor once everything is acked', async () => {
    await using t = createMemoryTransport();
    await t.publish([{ envelope: env('a') }, { envelope: env('b') }]);
    expect(vi.getTimerCount()).toBe(0);
    const sub = await t.consume((d) => d.ack(), { concurrency: 1 });
    await settle();
    expect(t.broker.depth(t.queue)).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await sub.close();
  });

  it('ends a lock exactly lockMs after the delivery: aborted with LockLostError and delivered again', async () => {
    await using t = createMemoryTransport({ lockMs: 1000 });
    const h = holding();
    await t.consume(h.handler, { concurrency: 2 });
    await t.publish([{ envelope: env('held') }]);
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(999);
    await settle();
    expect(h.seen.map((d) => d.attempt)).toEqual([1]);
    vi.advanceTimersByTime(1);
    await settle();
    expect(h.seen[0]?.signal.reason).toBeInstanceOf(LockLostError);
    expect((h.seen[0]?.signal.reason as Error | undefined)?.message).toBe(
      `lock on event "held" of queue "default" expired`,
    );
    expect(h.seen.map((d) => d.attempt)).toEqual([1, 2]);
    await h.release();
  });

  it('plans its wake-up for the first of several lock ends, and none for a message waiting on its key', async () => {
    await using t = createMemoryTransport({ lockMs: 1000 });
    const h = holding();
    await t.consume(h.handler, { concurrency: 4 });
    await t.publish([{ envelope: env('one', 'k') }, { envelope: env('two', 'k') }]);
    await settle();
    vi.advanceTimersByTime(400);
    await t.publish([{ envelope: env('other', 'j') }]);
    await settle();
    expect(h.seen.map((d) => d.envelope.id)).toEqual(['one', 'other']);
    const start = Date.now();
    vi.advanceTimersToNextTimer();
    expect(Date.now() - start).toBe(600); // the first lock's end, not the second's, nor sooner
    await settle();
    expect(h.seen.map((d) => d.envelope.id)).toEqual(['one', 'other', 'one']);
    expect(h.seen[0]?.signal.aborted).toBe(true);
    expect(h.seen[1]?.signal.aborted).toBe(false);
    await h.release();
  });

  it('holds one timer for a delayed retry, fires it when due, and none once the consumer left', async () => {
    await using t = createMemoryTransport();
    const attempts: number[] = [];
    const sub = await t.consume(
      async (d) => {
        attempts.push(d.attempt);
        if (d.attempt === 1) await d.retry({ delayMs: 5000 });
        else await d.ack();
      },
      { concurrency: 1 },
    );
    await t.publish([{ envelope: env('later') }]);
    await settle();
    expect(attempts).toEqual([1]);
    expect(vi.getTimerCount()).toBe(1);
    expect(await t.backlog()).toMatchObject({ ready: 0, delayed: 1, inFlight: 0 });
    vi.advanceTimersByTime(4999);
    await settle();
    expect(attempts).toEqual([1]);
    vi.advanceTimersByTime(1);
    await settle();
    expect(attempts).toEqual([1, 2]);
    expect(vi.getTimerCount()).toBe(0);

    await t.publish([{ envelope: env('again') }]);
    await settle();
    await sub.close();
    expect(t.broker.depth(t.queue)).toBe(1); // retried with a delay, then the consumer left
    expect(vi.getTimerCount()).toBe(0);
    await t.publish([{ envelope: env('ready') }]); // a due one ahead of the delayed one
    expect(vi.getTimerCount()).toBe(0);
  });

  it('hands the next message of a key out as soon as a hung delivery before it moves to the dead letters', async () => {
    await using t = createMemoryTransport({ lockMs: 1000, deliveryLimit: 1 });
    let unhang = () => {};
    const hung = new Promise<void>((resolve) => {
      unhang = resolve;
    });
    const delivered: string[] = [];
    await t.consume(
      async (d) => {
        delivered.push(d.envelope.id);
        if (d.envelope.id === 'hung') return hung; // deaf to its signal: nothing else runs the queue
        await d.ack();
      },
      { concurrency: 2 },
    );
    await t.publish([{ envelope: env('hung', 'k') }, { envelope: env('next', 'k') }]);
    await settle();
    expect(delivered).toEqual(['hung']);
    vi.advanceTimersByTime(1000);
    await settle();
    expect(delivered).toEqual(['hung', 'next']);
    expect(t.broker.depth(`${t.queue}.dead-letters`)).toBe(1);
    expect(t.broker.depth(t.queue)).toBe(0);
    unhang();
    await settle();
  });

  it('counts a message due this very millisecond as ready, and a held one as in flight', async () => {
    await using t = createMemoryTransport();
    await t.publish([{ envelope: env('now') }]);
    expect(await t.backlog()).toMatchObject({ ready: 1, delayed: 0, inFlight: 0 });
    const h = holding();
    await t.consume(h.handler, { concurrency: 1 });
    await settle();
    expect(await t.backlog()).toMatchObject({ ready: 0, delayed: 0, inFlight: 1 });
    await h.release();
  });

  it('keeps every dead letter, even two of one event moved in the same millisecond', async () => {
    await using t = createMemoryTransport({ deliveryLimit: 1, lockMs: 100, orderingPerKey: false });
    await t.consume((d) => d.retry({ delayMs: 0 }), { concurrency: 2 });
    await t.publish([
      { envelope: env('twice'), dedupeKey: 'twice:1' },
      { envelope: env('twice'), dedupeKey: 'twice:2' },
    ]);
    await settle();
    expect(t.broker.depth(`${t.queue}.dead-letters`)).toBe(2);
  });
});
