import { waitUntil } from '@onceflow/conformance';
import { type ClaimResult, createEnvelope, StoreUnavailableError } from '@onceflow/core';
import { startRedisServer } from '@onceflow/test-servers';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisInbox } from '../src/index.js';

const PORT = 6394;

const envelope = (id: string) =>
  createEnvelope({ id, source: 'stripe', type: 'charge.succeeded', payload: { id } });

/** The claim's answer once Redis answers again; `StoreUnavailableError` means not yet. */
const answered = (claim: () => Promise<ClaimResult>) =>
  waitUntil(
    async () => {
      try {
        return await claim();
      } catch (err) {
        if (err instanceof StoreUnavailableError) return undefined;
        throw err;
      }
    },
    { timeoutMs: 15_000, message: 'the store to answer after the restart' },
  );

describe('redis inbox across a Redis restart', () => {
  it('answers StoreUnavailableError while Redis is down, and keeps acknowledged claims (AOF, appendfsync always)', async () => {
    await using server = await startRedisServer({ port: PORT });
    // The client's defaults: reconnecting for ever, commands queued while offline. The store
    // itself must turn that into a prompt StoreUnavailableError.
    const redis = new Redis(server.url);
    await using _client = { [Symbol.asyncDispose]: async () => redis.disconnect() };
    redis.on('error', () => undefined); // connection errors while down are expected here
    const store = createRedisInbox({ redis, prefix: 'restart', timeoutMs: 500 });
    const pending = envelope('evt_pending');
    const done = envelope('evt_done');
    const claim = await store.claim(pending, { leaseMs: 120_000 });
    if (claim.status !== 'new') throw new Error(`claim: ${claim.status}`);
    const other = await store.claim(done, { leaseMs: 120_000 });
    if (other.status !== 'new') throw new Error(`claim: ${other.status}`);
    await store.markEnqueued(done.source, done.id, other.token);

    await server.kill();
    const started = Date.now();
    await expect(store.claim(envelope('evt_while_down'), { leaseMs: 1000 })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    await expect(
      store.markEnqueued(pending.source, pending.id, claim.token),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.stats()).rejects.toBeInstanceOf(StoreUnavailableError);
    // Three calls of at most timeoutMs (500) each; left to the client's retries (20 reconnects,
    // 50 ms more apart each time) the first alone would take about 10 s. The room between is for a
    // loaded machine, whose timers may fire seconds late.
    expect(Date.now() - started, 'within the timeout, not the client retries').toBeLessThan(8000);

    await server.start();
    expect(await answered(() => store.claim(pending, { leaseMs: 1000 })), 'claim survived').toEqual(
      {
        status: 'in-flight',
      },
    );
    expect(await store.claim(done, { leaseMs: 1000 }), 'enqueued survived').toEqual({
      status: 'duplicate',
    });
    await store.markEnqueued(pending.source, pending.id, claim.token);
    expect(await store.claim(pending, { leaseMs: 1000 })).toEqual({ status: 'duplicate' });
    const fresh = await store.claim(envelope('evt_after'), { leaseMs: 1000 });
    expect(fresh.status).toBe('new');
    // The claim made while Redis was down may have run after all (ioredis resends commands a
    // dead connection never answered): a pending claim the sender's retry or the relay takes over.
    expect(await store.stats()).toMatchObject({ enqueued: 2, processed: 0 });
  });
});
