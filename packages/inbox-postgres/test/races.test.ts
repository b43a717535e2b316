import { describe, expect, it } from 'vitest';
import { envelope, fixture, leasesEnded } from './helpers.js';

/** PostgreSQL-specific races, each run with real concurrent connections. */
describe('postgres inbox under concurrency', () => {
  it('of concurrent first claims exactly one is new; the others see it in flight', async () => {
    await using fx = await fixture({ max: 10 });
    const env = envelope();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fx.store.claim(env, { leaseMs: 60_000 })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 'new')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'in-flight')).toHaveLength(19);
  });

  it('of concurrent claims of an expired pending row exactly one takes it over', async () => {
    await using fx = await fixture({ max: 10 });
    const env = envelope();
    const first = await fx.store.claim(env, { leaseMs: 1 });
    expect(first.status).toBe('new');
    await leasesEnded(fx);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fx.store.claim(env, { leaseMs: 60_000 })),
    );
    expect(results.filter((r) => r.status === 'stale-pending')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in-flight')).toHaveLength(19);

    // The old token lost the row: its markEnqueued is a no-op, the new holder's works.
    if (first.status !== 'new') throw new Error('unreachable');
    await fx.store.markEnqueued(env.source, env.id, first.token);
    expect((await fx.store.stats()).pending).toBe(1);
    const taker = results.find((r) => r.status === 'stale-pending');
    if (taker?.status !== 'stale-pending') throw new Error('unreachable');
    await fx.store.markEnqueued(env.source, env.id, taker.token);
    expect(await fx.store.stats()).toMatchObject({ pending: 0, enqueued: 1 });
  });

  it('an expired pending row with other bytes is a conflict, never taken over', async () => {
    await using fx = await fixture();
    const env = envelope({ id: 'evt_c', payload: '{"a":1}' });
    await fx.store.claim(env, { leaseMs: 1 });
    await leasesEnded(fx);
    const other = envelope({ id: 'evt_c', payload: '{"a":2}' });
    expect(await fx.store.claim(other, { leaseMs: 60_000 })).toEqual({
      status: 'conflict',
      existingHash: env.payloadHash,
    });
  });

  it('concurrent relays take disjoint stale claims', async () => {
    await using fx = await fixture({ max: 10 });
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const env = envelope();
      ids.add(env.id);
      await fx.store.claim(env, { leaseMs: 1 });
    }
    await leasesEnded(fx);
    const batches = await Promise.all(
      Array.from({ length: 4 }, () =>
        fx.store.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 }),
      ),
    );
    const taken = batches.flat().map((s) => s.envelope.id);
    expect(new Set(taken).size).toBe(taken.length);
    expect(taken.length).toBe(30);
    expect(taken.every((id) => ids.has(id))).toBe(true);
    expect(await fx.store.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 })).toEqual([]);
  });

  it('of concurrent begins exactly one acquires, the rest are busy until the lease ends', async () => {
    await using fx = await fixture({ max: 10 });
    const env = envelope();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fx.store.begin(env, { leaseMs: 60_000, attempt: 1 })),
    );
    expect(results.filter((r) => r.status === 'acquired')).toHaveLength(1);
    const busy = results.filter((r) => r.status === 'busy');
    expect(busy).toHaveLength(19);
    for (const b of busy) {
      if (b.status === 'busy') expect(b.retryAfterMs).toBeGreaterThan(50_000);
    }
  });

  it('release gives up whichever lease its token names', async () => {
    await using fx = await fixture();
    const env = envelope();
    const claim = await fx.store.claim(env, { leaseMs: 60_000 });
    if (claim.status !== 'new') throw new Error('not new');
    const begun = await fx.store.begin(env, { leaseMs: 60_000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error('not acquired');

    // The claim goes; the worker's lease and the record stay (the event is known: a duplicate).
    await fx.store.release(env.source, env.id, claim.token);
    expect((await fx.store.get(env.source, env.id))?.state).toBe('processing');
    expect(await fx.store.claim(env, { leaseMs: 60_000 })).toEqual({ status: 'duplicate' });
    expect(await fx.store.begin(env, { leaseMs: 60_000, attempt: 2 })).toMatchObject({
      status: 'busy',
    });

    // The lease goes: the record is enqueued again and the next begin acquires at once.
    await fx.store.release(env.source, env.id, begun.token);
    expect(await fx.store.extend(env.source, env.id, begun.token, 60_000)).toBe(false);
    const rows = await fx.pool.query(
      `SELECT state, lease_token, proc_token FROM "${fx.schema}".onceflow_inbox`,
    );
    expect(rows.rows).toEqual([{ state: 'enqueued', lease_token: null, proc_token: null }]);
    expect((await fx.store.begin(env, { leaseMs: 60_000, attempt: 2 })).status).toBe('acquired');
  });

  it('complete by a token that lost its lease changes nothing; the holder completes once', async () => {
    await using fx = await fixture();
    const env = envelope();
    const first = await fx.store.begin(env, { leaseMs: 1, attempt: 1 });
    await leasesEnded(fx);
    const second = await fx.store.begin(env, { leaseMs: 60_000, attempt: 2 });
    if (first.status !== 'acquired' || second.status !== 'acquired')
      throw new Error('not acquired');
    await fx.store.complete(env.source, env.id, first.token);
    expect(await fx.store.extend(env.source, env.id, first.token, 60_000)).toBe(false);
    expect(await fx.store.extend(env.source, env.id, second.token, 60_000)).toBe(true);
    expect((await fx.store.begin(env, { leaseMs: 60_000, attempt: 3 })).status).toBe('busy');
    await fx.store.complete(env.source, env.id, second.token);
    await fx.store.complete(env.source, env.id, second.token); // idempotent
    expect(await fx.store.begin(env, { leaseMs: 60_000, attempt: 3 })).toEqual({
      status: 'processed',
    });
    expect((await fx.store.stats()).processed).toBe(1);
    const record = await fx.store.get(env.source, env.id);
    expect(record?.history.map((h) => h.state)).toEqual(['processing', 'processing', 'completed']);
  });

  it('a claim of an event a worker recorded first is a duplicate: the event is known', async () => {
    await using fx = await fixture();
    const env = envelope();
    const begun = await fx.store.begin(env, { leaseMs: 60_000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error('not acquired');
    expect(await fx.store.stats()).toMatchObject({ pending: 0, enqueued: 0, processed: 0 });
    expect(await fx.store.claim(env, { leaseMs: 60_000 })).toEqual({ status: 'duplicate' });
    expect(await fx.store.claim(envelope({ id: env.id }), { leaseMs: 60_000 })).toEqual({
      status: 'duplicate',
    });
    await fx.store.complete(env.source, env.id, begun.token);
    expect(await fx.store.claim(env, { leaseMs: 60_000 })).toEqual({ status: 'duplicate' });
    expect((await fx.store.stats()).processed).toBe(1);
  });

  it('a dead letter racing the attempt that holds the lease: the attempt wins, the dead letter is a no-op', async () => {
    await using fx = await fixture({ max: 10 });
    const env = envelope();
    const begun = await fx.store.begin(env, { leaseMs: 60_000, attempt: 1, consumer: 'w' });
    if (begun.status !== 'acquired') throw new Error('not acquired');
    const fields = { reason: 'delivery limit exceeded', attempts: 9, note: 'broker dead-letter' };
    await Promise.all([
      ...Array.from({ length: 10 }, () => fx.store.deadLetter(env, undefined, fields)),
      fx.store.complete(env.source, env.id, begun.token),
    ]);
    const record = await fx.store.get(env.source, env.id);
    expect(record?.state).toBe('completed');
    expect(record?.history.map((h) => h.state)).toEqual(['processing', 'completed']);
  });

  it('of concurrent dead letters of one event without a lease, one is recorded', async () => {
    await using fx = await fixture({ max: 10 });
    const env = envelope();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fx.store.deadLetter(env, undefined, { reason: `copy ${i}`, attempts: 1 }),
      ),
    );
    const record = await fx.store.get(env.source, env.id);
    expect(record?.state).toBe('dead-lettered');
    expect(record?.history).toHaveLength(1);
    expect(record?.envelope?.id).toBe(env.id);
    expect(await fx.store.count({ source: env.source, state: 'dead-lettered' })).toBe(1);
  });
});
