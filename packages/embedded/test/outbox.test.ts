import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  createMetrics,
  createOutboxDispatcher,
  createWorker,
  defineHandler,
  type Envelope,
  type OutgoingMessage,
  type Transport,
  TransportUnavailableError,
  UsageError,
} from '@onceflow/core';
import { createMemoryTransport } from '@onceflow/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbedded, type Embedded } from '../src/index.js';
import { tempDbPath, waitFor } from './helpers.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

const order = (n: number, key = `ord_${n}`) => ({
  source: 'orders',
  type: 'order.paid',
  key,
  payload: { n },
});

/** One business transaction: an order row and its outbox event; returns the event id. */
function placeOrder(embedded: Embedded, n: number, key?: string): string {
  const db = embedded.db;
  return db
    .transaction(() => {
      db.prepare('INSERT INTO orders (n) VALUES (?)').run(n);
      return embedded.outbox.add(db, order(n, key));
    })
    .immediate();
}

async function open(): Promise<Embedded> {
  const embedded = createEmbedded({ path: tempDbPath(), pollIntervalMs: 20 });
  await embedded.start();
  embedded.db.exec('CREATE TABLE orders (n INTEGER NOT NULL)');
  return embedded;
}

/** A transport that records what each publish carried, and fails while `down`. */
function recording(inner: Transport) {
  const calls: OutgoingMessage[][] = [];
  const state = { down: false };
  const transport: Transport = {
    ...inner,
    async publish(messages) {
      calls.push([...messages]);
      if (state.down) throw new TransportUnavailableError('broker down (test)');
      await inner.publish(messages);
    },
  };
  return { transport, calls, state };
}

describe('embedded outbox', () => {
  it('publishes a committed event with the id add chose; a rolled-back one never', async () => {
    await using embedded = await open();
    const { transport, calls } = recording(createMemoryTransport());
    const db = embedded.db;
    expect(() =>
      db
        .transaction(() => {
          embedded.outbox.add(db, order(1));
          throw new Error('business rule failed');
        })
        .immediate(),
    ).toThrow('business rule failed');
    const id = placeOrder(embedded, 2);
    expect(await embedded.outbox.stats()).toMatchObject({ unsent: 1 });
    expect(await createOutboxDispatcher({ outbox: embedded.outbox, transport }).runOnce()).toBe(1);
    expect(calls.flat().map((m) => [m.envelope.id, m.dedupeKey])).toEqual([[id, id]]);
    expect(await embedded.outbox.stats()).toEqual({ unsent: 0, oldestUnsentAgeMs: 0 });
  });

  it('refuses an add outside a transaction; keeps a caller-given id', async () => {
    await using embedded = await open();
    expect(() => embedded.outbox.add(embedded.db, order(1))).toThrow(UsageError);
    const db = embedded.db;
    const add = db.transaction(() => embedded.outbox.add(db, { ...order(1), id: 'ord_1:paid' }));
    expect(add.immediate()).toBe('ord_1:paid');
    const { transport, calls } = recording(createMemoryTransport());
    await createOutboxDispatcher({ outbox: embedded.outbox, transport }).runOnce();
    expect(calls.flat().map((m) => [m.envelope.id, m.dedupeKey])).toEqual([
      ['ord_1:paid', 'ord_1:paid'],
    ]);
  });

  it('broker down: retries with backoff, the same id and bytes, until it is sent', async () => {
    await using embedded = await open();
    const { transport, calls, state } = recording(createMemoryTransport());
    const id = placeOrder(embedded, 1);
    state.down = true;
    await using dispatcher = createOutboxDispatcher({
      outbox: embedded.outbox,
      transport,
      pollIntervalMs: 20,
      retryBaseDelayMs: 20,
      retryMaxDelayMs: 100,
    });
    dispatcher.start();
    await waitFor(() => calls.length >= 3, 20_000, 'three failed publishes');
    const row = embedded.db.prepare('SELECT last_error, sent_at FROM onceflow_outbox').get() as {
      last_error: string;
      sent_at: number | null;
    };
    expect(JSON.parse(row.last_error)).toMatchObject({ code: 'TRANSPORT_UNAVAILABLE' });
    expect(row.sent_at).toBeNull();
    state.down = false;
    await waitFor(async () => (await embedded.outbox.stats()).unsent === 0, 20_000, 'sent');
    expect(
      new Set(calls.flat().map((m) => `${m.envelope.id} ${m.envelope.payloadHash}`)).size,
    ).toBe(1);
    expect(calls.at(-1)?.[0]?.envelope.id).toBe(id);
  });

  it('publishes each key in add order, one row of a key at a time, with several dispatchers', async () => {
    await using embedded = await open();
    const keys = ['a', 'b', 'c'];
    const added = Array.from({ length: 60 }, (_, n) => {
      const key = keys[n % keys.length] as string;
      return { key, id: placeOrder(embedded, n, key) };
    });
    const inner = createMemoryTransport();
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const published: Envelope[] = [];
    const failing = added[1]?.id;
    let failures = 0;
    const transport: Transport = {
      ...inner,
      async publish(messages) {
        for (const m of messages) {
          if (inFlight.has(m.envelope.key as string)) overlaps.push(m.envelope.key as string);
          inFlight.add(m.envelope.key as string);
        }
        try {
          await new Promise((r) => setTimeout(r, 3));
          if (messages.some((m) => m.envelope.id === failing) && failures++ < 3) {
            throw new TransportUnavailableError('fails three times (test)');
          }
          await inner.publish(messages);
          published.push(...messages.map((m) => m.envelope));
        } finally {
          for (const m of messages) inFlight.delete(m.envelope.key as string);
        }
      },
    };
    const dispatchers = Array.from({ length: 3 }, () =>
      createOutboxDispatcher({
        outbox: embedded.outbox,
        transport,
        batchSize: 2,
        pollIntervalMs: 10,
        retryBaseDelayMs: 30,
        retryMaxDelayMs: 100,
      }),
    );
    for (const d of dispatchers) d.start();
    await waitFor(() => published.length >= added.length, 30_000, 'every row published');
    await Promise.all(dispatchers.map((d) => d.close()));
    expect(overlaps).toEqual([]);
    expect(failures).toBeGreaterThanOrEqual(4);
    for (const key of keys) {
      expect(published.filter((e) => e.key === key).map((e) => e.id)).toEqual(
        added.filter((a) => a.key === key).map((a) => a.id),
      );
    }
  });

  it('the worker creates the event record at first delivery and acks a double send as a duplicate', async () => {
    await using embedded = await open();
    const { transport, calls } = recording(createMemoryTransport({ dedupeWindowMs: false }));
    const metrics = createMetrics();
    const handled: string[] = [];
    await using worker = createWorker({
      transport,
      records: embedded.records,
      metrics,
      handlers: [
        defineHandler({
          type: 'order.paid',
          handle: async (_e, ctx) => void handled.push(ctx.envelope.id),
        }),
      ],
    });
    await worker.start();
    const id = placeOrder(embedded, 1);
    expect(await embedded.records.get('orders', id)).toBeUndefined();
    await createOutboxDispatcher({ outbox: embedded.outbox, transport }).runOnce();
    await waitFor(
      async () => (await embedded.records.get('orders', id))?.state === 'completed',
      10_000,
      'completed',
    );
    await transport.publish(calls[0] ?? []);
    const duplicates = async () =>
      (await metrics.duplicatesSuppressed.get()).values.reduce((n, v) => n + v.value, 0);
    await waitFor(async () => (await duplicates()) === 1, 10_000, 'the copy acked as a duplicate');
    expect(handled).toEqual([id]);
    expect(await embedded.records.get('orders', id)).toMatchObject({
      type: 'order.paid',
      attempts: 1,
    });
  });

  it('retention deletes sent rows older than retainSentMs', async () => {
    await using embedded = await open();
    const transport = createMemoryTransport();
    placeOrder(embedded, 1);
    placeOrder(embedded, 2);
    const dispatcher = createOutboxDispatcher({
      outbox: embedded.outbox,
      transport,
      retainSentMs: 0,
    });
    await dispatcher.runOnce();
    placeOrder(embedded, 3);
    await new Promise((r) => setTimeout(r, 5));
    expect(await dispatcher.purgeSent()).toBe(2);
    expect(await embedded.outbox.stats()).toMatchObject({ unsent: 1 });
  });

  it('a dispatcher SIGKILLed between publish and mark loses nothing: its rows are sent again after the lease', async () => {
    const path = tempDbPath();
    await using embedded = createEmbedded({ path, pollIntervalMs: 20 });
    await embedded.start();
    embedded.db.exec('CREATE TABLE orders (n INTEGER NOT NULL)');
    const ids = Array.from({ length: 12 }, (_, n) => placeOrder(embedded, n, `k${n % 3}`));
    const child = fork(
      fileURLToPath(new URL('./fixtures/outbox-dispatcher.ts', import.meta.url)),
      [path, 'outbox-work', '2', '1500'],
      {
        execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    children.push(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let hung: string[] = [];
    child.on('message', (m: { hanging?: string[] }) => {
      if (m.hanging) hung = m.hanging;
    });
    await waitFor(() => hung.length > 0, 30_000, 'the child to hang after a confirmed publish');
    child.kill('SIGKILL');
    await exited;

    const transport = embedded.transport('outbox-work');
    const seen = new Map<string, number>();
    const sub = await transport.consume(
      async (d) => {
        seen.set(d.envelope.id, (seen.get(d.envelope.id) ?? 0) + 1);
        await d.ack();
      },
      { concurrency: 4 },
    );
    await using dispatcher = createOutboxDispatcher({
      outbox: embedded.outbox,
      transport,
      pollIntervalMs: 20,
    });
    dispatcher.start();
    await waitFor(async () => (await embedded.outbox.stats()).unsent === 0, 30_000, 'all sent');
    await waitFor(() => seen.size === ids.length, 10_000, 'every event delivered');
    // the embedded transport dedupes the re-send on the event id: each event arrives once
    expect([...seen.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(seen.get(id), id).toBe(1);
    const leases = embedded.db
      .prepare(
        'SELECT id, attempts FROM onceflow_outbox WHERE id IN (SELECT value FROM json_each(?))',
      )
      .all(JSON.stringify(hung)) as { id: string; attempts: number }[];
    expect(leases).toHaveLength(hung.length);
    for (const row of leases) expect(row.attempts, `leases of ${row.id}`).toBeGreaterThanOrEqual(2);
    await sub.close();
  });
});
