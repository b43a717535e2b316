import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError } from '../../src/errors.js';
import { createMemoryInbox } from '../../src/memory/inbox.js';

/** A clock the test moves by hand, so lease expiry needs no waiting. */
function manualClock(start = Date.parse('2025-01-01T00:00:00Z')) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const env = (id: string, payload: unknown = { id }, receivedAt?: string) =>
  createEnvelope({ id, source: 'src', type: 't', payload, receivedAt });

describe('memory inbox', () => {
  it('expires claim leases on the injected clock: in-flight, then stale-pending with a new token', async () => {
    const clock = manualClock();
    const inbox = createMemoryInbox({ now: clock.now });
    const e = env('a');
    const first = await inbox.claim(e, { leaseMs: 1000 });
    expect(first.status).toBe('new');
    clock.advance(999);
    expect(await inbox.claim(e, { leaseMs: 1000 })).toEqual({ status: 'in-flight' });
    clock.advance(1);
    const stale = await inbox.claim(e, { leaseMs: 1000 });
    expect(stale.status).toBe('stale-pending');
    expect(stale).not.toEqual(first);
  });

  it('takeStale honours olderThanMs against the first claim time and re-leases oldest first', async () => {
    const clock = manualClock();
    const inbox = createMemoryInbox({ now: clock.now });
    await inbox.claim(env('old'), { leaseMs: 10 });
    clock.advance(5000);
    await inbox.claim(env('young'), { leaseMs: 10 });
    clock.advance(100);
    const taken = await inbox.takeStale({ olderThanMs: 1000, leaseMs: 500, limit: 10 });
    expect(taken.map((c) => c.envelope.id)).toEqual(['old']);
    expect(await inbox.takeStale({ olderThanMs: 0, leaseMs: 500, limit: 10 })).toHaveLength(1);
    clock.advance(500);
    const both = await inbox.takeStale({ olderThanMs: 0, leaseMs: 500, limit: 10 });
    expect(both.map((c) => c.envelope.id)).toEqual(['old', 'young']);
  });

  it('purges by the envelope receivedAt, never pending rows nor rows under a live processing lease', async () => {
    const clock = manualClock();
    const inbox = createMemoryInbox({ now: clock.now });
    const old = '2020-01-01T00:00:00.000Z';
    const pending = env('p', 1, old);
    const queued = env('q', 1, old);
    const busy = env('b', 1, old);
    await inbox.claim(pending, { leaseMs: 10 });
    for (const e of [queued, busy]) {
      const c = await inbox.claim(e, { leaseMs: 10 });
      if (c.status === 'new') await inbox.markEnqueued(e.source, e.id, c.token);
    }
    const lease = await inbox.begin('src', 'b', { leaseMs: 60_000 });
    expect(lease.status).toBe('acquired');
    expect(await inbox.purge({ olderThan: new Date('2021-01-01') })).toBe(1);
    expect(await inbox.stats()).toMatchObject({ pending: 1, enqueued: 1 });
    clock.advance(60_000);
    expect(await inbox.purge({ olderThan: new Date('2021-01-01') })).toBe(1);
    expect(await inbox.stats()).toMatchObject({ pending: 1, enqueued: 0, processed: 0 });
  });

  it('markProcessed seeds a processed event: begin answers processed, a later claim is a duplicate', async () => {
    const inbox = createMemoryInbox();
    await inbox.markProcessed('src', 'x');
    await inbox.markProcessed('src', 'x');
    expect(await inbox.isProcessed('src', 'x')).toBe(true);
    expect(await inbox.isProcessed('src', 'y')).toBe(false);
    expect(await inbox.begin('src', 'x', { leaseMs: 1000 })).toEqual({ status: 'processed' });
    expect(await inbox.claim(env('x'), { leaseMs: 1000 })).toEqual({ status: 'duplicate' });
    expect((await inbox.stats()).processed).toBe(1);
  });

  it('release gives up whichever the token owns: the pending claim or the processing lease', async () => {
    const inbox = createMemoryInbox();
    const e = env('r');
    const claim = await inbox.claim(e, { leaseMs: 60_000 });
    const lease = await inbox.begin('src', 'r', { leaseMs: 60_000 });
    if (claim.status !== 'new' || lease.status !== 'acquired') throw new Error('setup');
    await inbox.release('src', 'r', lease.token);
    expect(await inbox.claim(e, { leaseMs: 60_000 })).toEqual({ status: 'in-flight' });
    expect((await inbox.begin('src', 'r', { leaseMs: 60_000 })).status).toBe('acquired');
    await inbox.release('src', 'r', claim.token);
    expect((await inbox.claim(e, { leaseMs: 60_000 })).status).toBe('new');
    expect((await inbox.begin('src', 'r', { leaseMs: 60_000 })).status).toBe('busy');
  });

  it('never issues one token twice, even across inboxes: a token of another inbox owns nothing', async () => {
    const a = createMemoryInbox();
    const b = createMemoryInbox();
    const e = env('t');
    const fromA = await a.claim(e, { leaseMs: 60_000 });
    const fromB = await b.claim(e, { leaseMs: 60_000 });
    const leaseA = await a.begin('src', 'other', { leaseMs: 60_000 });
    if (fromA.status !== 'new' || fromB.status !== 'new' || leaseA.status !== 'acquired') {
      throw new Error('setup');
    }
    expect(new Set([fromA.token, fromB.token, leaseA.token]).size).toBe(3);
    await a.markEnqueued('src', 't', fromB.token);
    expect(await a.claim(e, { leaseMs: 60_000 })).toEqual({ status: 'in-flight' });
    await a.markEnqueued('src', 't', fromA.token);
    expect(await a.claim(e, { leaseMs: 60_000 })).toEqual({ status: 'duplicate' });
  });

  it('refuses bad options and non-positive leases', async () => {
    expect(() => createMemoryInbox({ now: 5 as unknown as () => number })).toThrow(ConfigError);
    const inbox = createMemoryInbox();
    await expect(inbox.claim(env('z'), { leaseMs: 0 })).rejects.toThrow(RangeError);
    await expect(inbox.begin('src', 'z', { leaseMs: -1 })).rejects.toThrow(RangeError);
  });
});
