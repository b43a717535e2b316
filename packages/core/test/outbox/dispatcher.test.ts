import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  createEnvelope,
  createMetrics,
  createOutboxDispatcher,
  type ErrorInfo,
  type OutboxStore,
  type OutgoingMessage,
  TransportUnavailableError,
} from '../../src/index.js';
import { createMemoryTransport } from '../../src/testing.js';

interface Row {
  seq: number;
  key: string;
  id: string;
  token?: string | undefined;
  until: number;
  attempts: number;
  error?: ErrorInfo | undefined;
  sent: boolean;
}

/** The contract in the heap, one process: heads of each key, row leases. For these tests only. */
function heapOutbox(count: number) {
  const rows: Row[] = Array.from({ length: count }, (_, i) => ({
    seq: i + 1,
    key: `k${i % 3}`,
    id: `evt_${i + 1}`,
    until: 0,
    attempts: 0,
    sent: false,
  }));
  const envelopeOf = (r: Row) =>
    createEnvelope({ id: r.id, source: 'orders', type: 'order.paid', key: r.key, payload: {} });
  const owned = (token: string, seqs: readonly number[]) =>
    rows.filter((r) => seqs.includes(r.seq) && r.token === token && !r.sent);
  const store: OutboxStore = {
    async lease({ limit, leaseMs }) {
      const token = randomUUID();
      const now = Date.now();
      const heads = rows.filter(
        (r) =>
          !r.sent &&
          r.until <= now &&
          !rows.some((e) => e.key === r.key && !e.sent && e.seq < r.seq),
      );
      const taken = heads.slice(0, limit);
      for (const r of taken)
        Object.assign(r, { token, until: now + leaseMs, attempts: r.attempts + 1 });
      return {
        token,
        rows: taken.map((r) => ({ seq: r.seq, envelope: envelopeOf(r), attempts: r.attempts })),
      };
    },
    async markSent(token, seqs) {
      for (const r of owned(token, seqs)) Object.assign(r, { sent: true, token: undefined });
    },
    async reschedule(token, seqs, { delayMs, error }) {
      for (const r of owned(token, seqs)) {
        Object.assign(r, {
          token: undefined,
          until: Date.now() + delayMs,
          error: error ?? r.error,
        });
      }
    },
    async purgeSent() {
      return 0;
    },
    async stats() {
      return { unsent: rows.filter((r) => !r.sent).length, oldestUnsentAgeMs: 0 };
    },
  };
  return { store, rows };
}

describe('createOutboxDispatcher', () => {
  it('publishes with the event id as dedupe key, marks sent, and counts what it published', async () => {
    const { store, rows } = heapOutbox(7);
    const sent: OutgoingMessage[] = [];
    const inner = createMemoryTransport();
    const metrics = createMetrics();
    const dispatcher = createOutboxDispatcher({
      outbox: store,
      transport: {
        publish: async (m) => {
          sent.push(...m);
          await inner.publish(m);
        },
      },
      batchSize: 2,
      metrics,
    });
    expect(await dispatcher.runOnce()).toBe(7);
    expect(sent.map((m) => m.dedupeKey)).toEqual(sent.map((m) => m.envelope.id));
    expect(new Set(sent.map((m) => m.envelope.id)).size).toBe(7);
    expect(rows.every((r) => r.sent)).toBe(true);
    expect((await metrics.outboxPublished.get()).values[0]).toMatchObject({ value: 7 });
  });

  it('a failed publish rejects runOnce and reschedules the batch with the error', async () => {
    const { store, rows } = heapOutbox(2);
    const dispatcher = createOutboxDispatcher({
      outbox: store,
      transport: {
        publish: async () => {
          throw new TransportUnavailableError('down (test)');
        },
      },
      retryBaseDelayMs: 10_000,
    });
    await expect(dispatcher.runOnce()).rejects.toBeInstanceOf(TransportUnavailableError);
    for (const r of rows) {
      expect(r.token).toBeUndefined();
      expect(r.sent).toBe(false);
    }
    expect(rows.find((r) => r.error)?.error).toMatchObject({ code: 'TRANSPORT_UNAVAILABLE' });
  });

  it('close waits for the batch in flight and gives back the one leased ahead', async () => {
    const { store, rows } = heapOutbox(6);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let publishing = 0;
    const dispatcher = createOutboxDispatcher({
      outbox: store,
      transport: {
        publish: async () => {
          publishing += 1;
          await gate;
        },
      },
      batchSize: 1,
      leaseMs: 60_000,
    });
    dispatcher.start();
    while (publishing === 0 || rows.filter((r) => r.token).length < 2) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const closed = dispatcher.close();
    release();
    await closed;
    expect(rows.filter((r) => r.sent)).toHaveLength(1);
    expect(
      rows.filter((r) => !r.sent && r.until > Date.now()),
      'rows still leased after close',
    ).toEqual([]);
  });

  it('sets the depth gauges while started with metrics', async () => {
    const { store } = heapOutbox(0);
    const metrics = createMetrics();
    await using dispatcher = createOutboxDispatcher({
      outbox: { ...store, stats: async () => ({ unsent: 4, oldestUnsentAgeMs: 2500 }) },
      transport: createMemoryTransport(),
      metrics,
      statsIntervalMs: 10,
    });
    dispatcher.start();
    for (;;) {
      const age = (await metrics.outboxOldestUnsentAge.get()).values[0]?.value;
      if (age === 2.5) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect((await metrics.outboxDepth.get()).values[0]?.value).toBe(4);
  });

  it('refuses a config without an outbox', () => {
    expect(() => createOutboxDispatcher({ transport: createMemoryTransport() } as never)).toThrow(
      ConfigError,
    );
  });
});
