import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/memory/store.js';

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

/**
 * What is the memory store's own: the injected clock, its helpers and its options. The contract
 * (claims, leases, the record's states, dead letters, history, listing, retention) is
 * `describeStoreConformance`, run on this store in packages/conformance.
 */
describe('memory store', () => {
  it('expires claim leases on the injected clock: in-flight, then stale-pending with a new token', async () => {
    const clock = manualClock();
    const store = createMemoryStore({ now: clock.now });
    const e = env('a');
    const first = await store.claim(e, { leaseMs: 1000 });
    expect(first.status).toBe('new');
    clock.advance(999);
    expect(await store.claim(e, { leaseMs: 1000 })).toEqual({ status: 'in-flight' });
    clock.advance(1);
    const stale = await store.claim(e, { leaseMs: 1000 });
    expect(stale.status).toBe('stale-pending');
    expect(stale).not.toEqual(first);
  });

  it('takeStale honours olderThanMs against the first claim time and re-leases oldest first', async () => {
    const clock = manualClock();
    const store = createMemoryStore({ now: clock.now });
    await store.claim(env('old'), { leaseMs: 10 });
    clock.advance(5000);
    await store.claim(env('young'), { leaseMs: 10 });
    clock.advance(100);
    const taken = await store.takeStale({ olderThanMs: 1000, leaseMs: 500, limit: 10 });
    expect(taken.map((c) => c.envelope.id)).toEqual(['old']);
    expect(await store.takeStale({ olderThanMs: 0, leaseMs: 500, limit: 10 })).toHaveLength(1);
    clock.advance(500);
    const both = await store.takeStale({ olderThanMs: 0, leaseMs: 500, limit: 10 });
    expect(both.map((c) => c.envelope.id)).toEqual(['old', 'young']);
  });

  it('purges by the envelope receivedAt, never pending rows nor records an attempt is processing', async () => {
    const clock = manualClock();
    const store = createMemoryStore({ now: clock.now });
    const old = '2020-01-01T00:00:00.000Z';
    const pending = env('p', 1, old);
    const queued = env('q', 1, old);
    const busy = env('b', 1, old);
    await store.claim(pending, { leaseMs: 10 });
    for (const e of [queued, busy]) {
      const c = await store.claim(e, { leaseMs: 10 });
      if (c.status === 'new') await store.markEnqueued(e.source, e.id, c.token);
    }
    const lease = await store.begin(busy, { leaseMs: 60_000, attempt: 1 });
    expect(lease.status).toBe('acquired');
    expect(await store.purge({ olderThan: new Date('2021-01-01') })).toBe(1);
    expect(await store.stats()).toMatchObject({ pending: 1, enqueued: 1 });
    // Its lease ran out, but the broker still holds the message: the record stays until it ends.
    clock.advance(60_000);
    expect(await store.purge({ olderThan: new Date('2021-01-01') })).toBe(0);
    if (lease.status === 'acquired') await store.complete('src', 'b', lease.token);
    expect(await store.purge({ olderThan: new Date('2021-01-01') })).toBe(1);
    expect(await store.stats()).toMatchObject({ pending: 1, enqueued: 0, processed: 0 });
  });

  it('dates history entries, updatedAt and nextAttemptAt on the injected clock', async () => {
    const clock = manualClock();
    const store = createMemoryStore({ now: clock.now });
    const e = env('h', 1, '2024-06-01T00:00:00.000Z');
    const first = await store.begin(e, { leaseMs: 1000, attempt: 1, consumer: 'w1' });
    if (first.status !== 'acquired') throw new Error('setup');
    clock.advance(250);
    const nextAttemptAt = new Date(clock.now() + 5000);
    await store.scheduleRetry('src', 'h', first.token, { nextAttemptAt });
    const record = await store.get('src', 'h');
    expect(record).toMatchObject({
      state: 'retry-scheduled',
      receivedAt: '2024-06-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.250Z',
      nextAttemptAt: '2025-01-01T00:00:05.250Z',
      consumer: 'w1',
    });
    expect(record?.history.map((h) => [h.at, h.state, h.actor])).toEqual([
      ['2025-01-01T00:00:00.000Z', 'processing', 'w1'],
      ['2025-01-01T00:00:00.250Z', 'retry-scheduled', 'w1'],
    ]);
  });

  it('keeps the envelope while the claim is pending and once dead-lettered, not in between', async () => {
    const store = createMemoryStore();
    const e = env('k');
    const claim = await store.claim(e, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error('setup');
    expect((await store.get('src', 'k'))?.envelope?.id).toBe('k');
    await store.markEnqueued('src', 'k', claim.token);
    expect((await store.get('src', 'k'))?.envelope).toBeUndefined(); // it is on the broker now
    await store.deadLetter(e, undefined, { reason: 'poison', attempts: 1 });
    expect((await store.get('src', 'k'))?.envelope?.payloadHash).toBe(e.payloadHash);
  });

  it('markProcessed seeds a processed event: begin answers processed, a later claim is a duplicate', async () => {
    const store = createMemoryStore();
    await store.markProcessed('src', 'x');
    await store.markProcessed('src', 'x');
    expect(await store.isProcessed('src', 'x')).toBe(true);
    expect(await store.isProcessed('src', 'y')).toBe(false);
    expect(await store.begin(env('x'), { leaseMs: 1000, attempt: 1 })).toEqual({
      status: 'processed',
    });
    expect(await store.claim(env('x'), { leaseMs: 1000 })).toEqual({ status: 'duplicate' });
    expect((await store.stats()).processed).toBe(1);
    expect((await store.get('src', 'x'))?.history.map((h) => h.state)).toEqual(['completed']);
    // A discarded dead letter counts as processed too: nothing runs it again.
    await store.deadLetter(env('d'), undefined, { reason: 'poison', attempts: 1 });
    await store.act('src', 'd', { kind: 'discarded', actor: 'test' });
    expect(await store.isProcessed('src', 'd')).toBe(true);
  });

  it('release gives up whichever the token owns: the pending claim or the processing lease', async () => {
    const store = createMemoryStore();
    const e = env('r');
    const claim = await store.claim(e, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error('setup');
    await store.release('src', 'r', claim.token);
    expect(await store.get('src', 'r')).toBeUndefined(); // the sender's retry claims it anew
    const again = await store.claim(e, { leaseMs: 60_000 });
    const lease = await store.begin(e, { leaseMs: 60_000, attempt: 1 });
    if (again.status !== 'new' || lease.status !== 'acquired') throw new Error('setup');
    await store.release('src', 'r', lease.token);
    expect((await store.get('src', 'r'))?.state).toBe('enqueued');
    // A worker had it: the receiver's late release keeps the record, a claim is a duplicate.
    await store.release('src', 'r', again.token);
    expect((await store.get('src', 'r'))?.state).toBe('enqueued');
    expect(await store.claim(e, { leaseMs: 60_000 })).toEqual({ status: 'duplicate' });
    expect((await store.begin(e, { leaseMs: 60_000, attempt: 2 })).status).toBe('acquired');
  });

  it('never issues one token twice, even across stores: a token of another store owns nothing', async () => {
    const a = createMemoryStore();
    const b = createMemoryStore();
    const e = env('t');
    const fromA = await a.claim(e, { leaseMs: 60_000 });
    const fromB = await b.claim(e, { leaseMs: 60_000 });
    const leaseA = await a.begin(env('other'), { leaseMs: 60_000, attempt: 1 });
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
    expect(() => createMemoryStore({ now: 5 as unknown as () => number })).toThrow(
      /memory store options: .*must be a function/s,
    );
    expect(() => createMemoryStore({ now: 5 as unknown as () => number })).toThrow(ConfigError);
    const store = createMemoryStore();
    await expect(store.claim(env('z'), { leaseMs: 0 })).rejects.toThrow(RangeError);
    await expect(store.begin(env('z'), { leaseMs: -1, attempt: 1 })).rejects.toThrow(RangeError);
    await expect(store.extend('src', 'z', 'token', 0)).rejects.toThrow(RangeError);
    await expect(store.takeStale({ olderThanMs: 0, leaseMs: 0, limit: 1 })).rejects.toThrow(
      RangeError,
    );
  });
});
