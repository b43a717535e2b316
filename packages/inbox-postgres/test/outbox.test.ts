import {
  createMetrics,
  createOutboxDispatcher,
  defineHandler,
  createWorker,
  type Envelope,
  type OutgoingMessage,
  type Transport,
  TransportUnavailableError,
  UsageError,
} from '@onceflow/core';
import { createMemoryTransport } from '@onceflow/core/testing';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresOutbox } from '../src/index.js';
import { type Fixture, fixture, waitUntil } from './helpers.js';

/** The memory transport, recording what each publish carried and failing while `down` is set. */
function recording(inner: Transport = createMemoryTransport({ orderingPerKey: true })) {
  const published: Envelope[] = [];
  const calls: OutgoingMessage[][] = [];
  const state = { down: false, failIds: new Set<string>() };
  const transport: Transport = {
    ...inner,
    async publish(messages) {
      calls.push([...messages]);
      if (state.down || messages.some((m) => state.failIds.has(m.envelope.id))) {
        throw new TransportUnavailableError('broker down (test)');
      }
      await inner.publish(messages);
      published.push(...messages.map((m) => m.envelope));
    },
  };
  return { transport, published, calls, state };
}

async function inTransaction<T>(fx: Fixture, fn: (client: pg.PoolClient) => Promise<T>) {
  const client = await fx.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

const order = (n: number, key = `ord_${n}`) => ({
  source: 'orders',
  type: 'order.paid',
  key,
  payload: { n },
});

describe('postgres outbox', () => {
  it('publishes a committed event with the id add chose, as envelope id and dedupe key, then marks it sent', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const { transport, calls } = recording();
    const id = await inTransaction(fx, (client) => outbox.add(client, order(1)));
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await outbox.stats()).toMatchObject({ unsent: 1 });

    const dispatcher = createOutboxDispatcher({ outbox, transport });
    expect(await dispatcher.runOnce()).toBe(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.[0]?.envelope).toMatchObject({
      id,
      source: 'orders',
      type: 'order.paid',
      key: 'ord_1',
    });
    expect(calls[0]?.[0]?.dedupeKey).toBe(id);
    expect(await outbox.stats()).toEqual({ unsent: 0, oldestUnsentAgeMs: 0 });
    expect(await dispatcher.runOnce()).toBe(0);
  });

  it('never publishes an event whose transaction rolled back', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const { transport, published } = recording();
    await expect(
      inTransaction(fx, async (client) => {
        await outbox.add(client, order(1));
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    const kept = await inTransaction(fx, (client) => outbox.add(client, order(2)));
    expect(await createOutboxDispatcher({ outbox, transport }).runOnce()).toBe(1);
    expect(published.map((e) => e.id)).toEqual([kept]);
  });

  it('keeps a caller-given id: the envelope id and dedupe key of every send', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const { transport, calls } = recording();
    const id = await inTransaction(fx, (c) => outbox.add(c, { ...order(1), id: 'ord_1:paid' }));
    expect(id).toBe('ord_1:paid');
    await createOutboxDispatcher({ outbox, transport }).runOnce();
    expect(calls.flat().map((m) => [m.envelope.id, m.dedupeKey])).toEqual([
      ['ord_1:paid', 'ord_1:paid'],
    ]);
  });

  it('refuses a pool and an event without a type', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    // (types refuse a pool too; JavaScript callers get the UsageError)
    await expect(outbox.add(fx.pool as unknown as pg.PoolClient, order(1))).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(
      inTransaction(fx, (c) => outbox.add(c, { ...order(1), type: '' })),
    ).rejects.toBeInstanceOf(UsageError);
  });

  it('broker down: reschedules with backoff, then publishes the same id, bytes and hash', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const { transport, calls, published, state } = recording();
    const id = await inTransaction(fx, (client) => outbox.add(client, order(1)));
    state.down = true;
    await using dispatcher = createOutboxDispatcher({
      outbox,
      transport,
      pollIntervalMs: 20,
      retryBaseDelayMs: 20,
      retryMaxDelayMs: 100,
    });
    dispatcher.start();
    await waitUntil(async () => calls.length >= 3, 20_000);
    const { rows } = await fx.pool.query(
      `SELECT attempts, last_error->>'code' AS code, sent_at FROM "${fx.schema}".onceflow_inbox_outbox`,
    );
    expect(rows[0]).toMatchObject({ code: 'TRANSPORT_UNAVAILABLE', sent_at: null });
    state.down = false;
    await waitUntil(async () => published.length === 1, 20_000);
    const ids = new Set(calls.flat().map((m) => m.envelope.id));
    const hashes = new Set(calls.flat().map((m) => m.envelope.payloadHash));
    expect([...ids]).toEqual([id]);
    expect(hashes.size).toBe(1);
    await waitUntil(async () => (await outbox.stats()).unsent === 0, 10_000);
  });

  it('publishes each key in add order, never two rows of a key at once, a failed row holding its key back, with several dispatchers', async () => {
    await using fx = await fixture({ max: 12 });
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const keys = ['a', 'b', 'c', 'd'];
    const added: { id: string; key: string }[] = [];
    for (let n = 0; n < 80; n++) {
      const key = keys[n % keys.length] as string;
      const id = await inTransaction(fx, (client) => outbox.add(client, order(n, key)));
      added.push({ id, key });
    }
    const inner = createMemoryTransport({ orderingPerKey: true });
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const order_: Envelope[] = [];
    const blocked = added.find((a) => a.key === 'b')?.id as string;
    let blockedFailures = 0;
    const transport: Transport = {
      ...inner,
      async publish(messages) {
        for (const m of messages) {
          const key = m.envelope.key as string;
          if (inFlight.has(key)) overlaps.push(key);
          inFlight.add(key);
        }
        try {
          await new Promise((r) => setTimeout(r, 5));
          if (messages.some((m) => m.envelope.id === blocked) && blockedFailures++ < 3) {
            throw new TransportUnavailableError('this one fails three times (test)');
          }
          await inner.publish(messages);
          order_.push(...messages.map((m) => m.envelope));
        } finally {
          for (const m of messages) inFlight.delete(m.envelope.key as string);
        }
      },
    };
    const dispatchers = Array.from({ length: 3 }, () =>
      createOutboxDispatcher({
        outbox,
        transport,
        batchSize: 3,
        pollIntervalMs: 10,
        retryBaseDelayMs: 50,
        retryMaxDelayMs: 200,
      }),
    );
    for (const d of dispatchers) d.start();
    await waitUntil(async () => order_.length >= added.length, 30_000);
    await Promise.all(dispatchers.map((d) => d.close()));

    expect(overlaps, 'keys with two rows in flight at once').toEqual([]);
    expect(blockedFailures).toBeGreaterThanOrEqual(4);
    expect(order_.map((e) => e.id).sort()).toEqual(added.map((a) => a.id).sort());
    for (const key of keys) {
      expect(
        order_.filter((e) => e.key === key).map((e) => e.id),
        `order of key ${key}`,
      ).toEqual(added.filter((a) => a.key === key).map((a) => a.id));
    }
  });

  it('an event from the outbox gets its event record at first delivery and is handled once, its double send acked as a duplicate', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    // no broker dedupe: the double send reaches the worker, whose record guard must hold
    const { transport, calls } = recording(createMemoryTransport({ dedupeWindowMs: false }));
    const metrics = createMetrics();
    const id = await inTransaction(fx, (client) => outbox.add(client, order(7)));
    expect(await fx.store.get('orders', id), 'no record before the first delivery').toBeUndefined();
    const handled: string[] = [];
    await using worker = createWorker({
      transport,
      records: fx.store,
      metrics,
      handlers: [
        defineHandler({
          type: 'order.paid',
          handle: async (_event, ctx) => void handled.push(ctx.envelope.id),
        }),
      ],
    });
    await worker.start();
    await createOutboxDispatcher({ outbox, transport }).runOnce();
    await waitUntil(async () => (await fx.store.get('orders', id))?.state === 'completed', 10_000);
    // what a dispatcher killed between publish and mark does: the same message again
    await transport.publish(calls[0] ?? []);
    const duplicates = async () =>
      (await metrics.duplicatesSuppressed.get()).values.reduce((n, v) => n + v.value, 0);
    await waitUntil(async () => (await duplicates()) === 1, 10_000);
    expect(await fx.store.get('orders', id)).toMatchObject({
      source: 'orders',
      id,
      type: 'order.paid',
      key: 'ord_7',
      state: 'completed',
      attempts: 1,
    });
    expect(handled).toEqual([id]);
  });

  it('retention deletes sent rows older than retainSentMs, never unsent ones', async () => {
    await using fx = await fixture();
    const outbox = createPostgresOutbox({ pool: fx.pool, schema: fx.schema });
    const { transport } = recording();
    await inTransaction(fx, (c) => outbox.add(c, order(1)));
    await inTransaction(fx, (c) => outbox.add(c, order(2)));
    const dispatcher = createOutboxDispatcher({ outbox, transport, retainSentMs: 0 });
    await dispatcher.runOnce();
    await inTransaction(fx, (c) => outbox.add(c, order(3)));
    expect(await dispatcher.purgeSent()).toBe(2);
    const stats = await outbox.stats();
    expect(stats.unsent).toBe(1);
    expect(stats.oldestUnsentAgeMs).toBeGreaterThanOrEqual(0);
    const { rows } = await fx.pool.query(
      `SELECT count(*)::int AS n FROM "${fx.schema}".onceflow_inbox_outbox`,
    );
    expect(rows[0].n).toBe(1);
  });
});
