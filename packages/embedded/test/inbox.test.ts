import { createEnvelope, StoreUnavailableError } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { event, tempDbPath } from './helpers.js';

describe('embedded inbox', () => {
  it('remembers claims across a reopen of the file', async () => {
    const path = tempDbPath();
    const first = createEmbedded({ path });
    const claimed = await first.inbox.claim(event('evt_1'), { leaseMs: 60_000 });
    expect(claimed.status).toBe('new');
    if (claimed.status !== 'new') return;
    await first.inbox.markEnqueued('test', 'evt_1', claimed.token);
    await first.inbox.claim(event('evt_2'), { leaseMs: 60_000 });
    await first.close();

    await using second = createEmbedded({ path });
    expect(await second.inbox.claim(event('evt_1'), { leaseMs: 1000 })).toEqual({
      status: 'duplicate',
    });
    expect(await second.inbox.claim(event('evt_2'), { leaseMs: 1000 })).toEqual({
      status: 'in-flight',
    });
    expect(await second.inbox.stats()).toMatchObject({ pending: 1, enqueued: 1, processed: 0 });
  });

  it('answers conflict for the same id with other bytes and counts recorded conflicts', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const original = event('evt_1', { payload: { amount: 1 } });
    const other = event('evt_1', { payload: { amount: 2 } });
    await embedded.inbox.claim(original, { leaseMs: 1000 });
    expect(await embedded.inbox.claim(other, { leaseMs: 1000 })).toEqual({
      status: 'conflict',
      existingHash: original.payloadHash,
    });
    await embedded.inbox.recordConflict(other);
    expect((await embedded.inbox.stats()).conflicts).toBe(1);
  });

  it('hands stale pending claims to the relay with a fresh lease each, oldest first', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    await embedded.inbox.claim(event('evt_a'), { leaseMs: 1 });
    await embedded.inbox.claim(event('evt_b'), { leaseMs: 1 });
    await embedded.inbox.claim(event('evt_live'), { leaseMs: 60_000 });
    await new Promise((r) => setTimeout(r, 5));

    const stale = await embedded.inbox.takeStale({ olderThanMs: 0, leaseMs: 60_000, limit: 10 });
    expect(stale.map((s) => s.envelope.id)).toEqual(['evt_a', 'evt_b']);
    expect(Buffer.from(stale[0]!.envelope.payload)).toEqual(Buffer.from(event('evt_a').payload));
    expect(new Set(stale.map((s) => s.token)).size).toBe(2);
    // Re-leased: a second relay pass and a sender retry both keep off them.
    expect(await embedded.inbox.takeStale({ olderThanMs: 0, leaseMs: 1, limit: 10 })).toEqual([]);
    expect((await embedded.inbox.claim(event('evt_a'), { leaseMs: 1 })).status).toBe('in-flight');

    const [a] = stale;
    await embedded.inbox.markEnqueued('test', 'evt_a', a!.token);
    expect((await embedded.inbox.claim(event('evt_a'), { leaseMs: 1 })).status).toBe('duplicate');
  });

  it('purges enqueued and processed rows but never pending ones', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const old = (id: string) =>
      createEnvelope({
        id,
        source: 'test',
        type: 't',
        payload: id,
        receivedAt: '2020-01-01T00:00:00Z',
      });
    const enqueued = await embedded.inbox.claim(old('enqueued'), { leaseMs: 1000 });
    if (enqueued.status !== 'new') throw new Error('expected new');
    await embedded.inbox.markEnqueued('test', 'enqueued', enqueued.token);
    await embedded.inbox.claim(old('pending'), { leaseMs: 1 });
    await embedded.inbox.claim(event('recent'), { leaseMs: 1000 });
    const processed = await embedded.inbox.claim(old('processed'), { leaseMs: 1000 });
    if (processed.status !== 'new') throw new Error('expected new');
    await embedded.inbox.markEnqueued('test', 'processed', processed.token);
    const begun = await embedded.records.begin(old('processed'), { leaseMs: 1000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error('expected acquired');
    await embedded.records.complete('test', 'processed', begun.token);

    expect(await embedded.inbox.purge({ olderThan: new Date('2021-01-01') })).toBe(2);
    const stats = await embedded.inbox.stats();
    expect(stats).toMatchObject({ pending: 2, enqueued: 0, processed: 0 });
    expect(stats.oldestUnprocessedAt?.toISOString()).toBe('2020-01-01T00:00:00.000Z');
  });

  it('answers duplicate for an event the worker already processed without an inbox', async () => {
    await using embedded = createEmbedded({ path: tempDbPath() });
    const begun = await embedded.records.begin(event('evt_own'), { leaseMs: 1000, attempt: 1 });
    if (begun.status !== 'acquired') throw new Error('expected acquired');
    expect((await embedded.inbox.stats()).processed).toBe(0);
    await embedded.records.complete('test', 'evt_own', begun.token);
    expect(await embedded.inbox.claim(event('evt_own'), { leaseMs: 1000 })).toEqual({
      status: 'duplicate',
    });
  });

  it('fails with StoreUnavailableError once closed, and opens nothing before first use', async () => {
    const path = tempDbPath();
    const embedded = createEmbedded({ path });
    const { existsSync } = await import('node:fs');
    expect(existsSync(path)).toBe(false);
    await embedded.start();
    expect(existsSync(path)).toBe(true);
    await embedded.close();
    await expect(embedded.inbox.stats()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
