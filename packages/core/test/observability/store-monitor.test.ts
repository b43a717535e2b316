import { describe, expect, it } from 'vitest';
import { createEnvelope, createMetrics, createStoreMonitor } from '../../src/index.js';
import { createMemoryStore } from '../../src/testing.js';

const gauge = async (g: {
  get(): Promise<{ values: { value: number; labels: Record<string, unknown> }[] }>;
}) => (await g.get()).values;

describe('store monitor', () => {
  it('sets oldest-unprocessed age, pending claims and the events per state from the store', async () => {
    const metrics = createMetrics();
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const store = createMemoryStore({ now: () => t0 + 90_000 });
    const envelope = (id: string) =>
      createEnvelope({ id, source: 's', type: 't', payload: {}, receivedAt: new Date(t0) });
    const claim = await store.claim(envelope('e1'), { leaseMs: 1_000_000 });
    expect(claim.status).toBe('new');
    for (const id of ['e2', 'e3']) {
      await store.deadLetter(envelope(id), undefined, { reason: 'poison', attempts: 1 });
    }

    const monitor = createStoreMonitor({
      metrics,
      inbox: store,
      records: store,
      now: () => t0 + 90_000,
    });
    expect(await monitor.runOnce()).toBe(2);
    expect((await gauge(metrics.oldestUnprocessedAge))[0]?.value).toBe(90);
    expect((await gauge(metrics.inboxPending))[0]?.value).toBe(1);
    const byState = async () =>
      Object.fromEntries((await gauge(metrics.events)).map((v) => [v.labels.state, v.value]));
    expect(await byState()).toEqual({
      received: 1,
      enqueued: 0,
      processing: 0,
      'retry-scheduled': 0,
      completed: 0,
      'dead-lettered': 2,
      discarded: 0,
    });

    // A discarded dead letter moves from one state to the other.
    await store.act('s', 'e2', { kind: 'discarded', actor: 'test' });
    await monitor.runOnce();
    expect(await byState()).toMatchObject({ 'dead-lettered': 1, discarded: 1 });
    await monitor.close();
  });
});
