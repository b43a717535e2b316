import { describe, expect, it } from 'vitest';
import { createEnvelope, createMetrics, createStoreMonitor } from '../../src/index.js';
import { createMemoryBroker, createMemoryInbox, createMemoryTransport } from '../../src/testing.js';

const gauge = async (g: { get(): Promise<{ values: { value: number; labels: object }[] }> }) =>
  (await g.get()).values;

describe('store monitor', () => {
  it('sets oldest-unprocessed age, pending claims and dead-letter depth from the stores', async () => {
    const metrics = createMetrics();
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const inbox = createMemoryInbox({ now: () => t0 + 90_000 });
    const transport = createMemoryTransport({ broker: createMemoryBroker(), queue: 'q' });
    await transport.start();
    const old = createEnvelope({
      id: 'e1',
      source: 's',
      type: 't',
      payload: {},
      receivedAt: new Date(t0),
    });
    const claim = await inbox.claim(old, { leaseMs: 1_000_000 });
    expect(claim.status).toBe('new');
    await transport.publish([{ envelope: old }]);
    const sub = await transport.consume((d) => d.deadLetter({ reason: 'poison' }), {
      concurrency: 1,
      lockMs: 1000,
    });
    await expect.poll(() => transport.deadLetters.count()).toBe(1);
    await sub.close();

    const monitor = createStoreMonitor({
      metrics,
      inbox,
      transports: [transport],
      now: () => t0 + 90_000,
    });
    expect(await monitor.runOnce()).toBe(2);
    expect((await gauge(metrics.oldestUnprocessedAge))[0]?.value).toBe(90);
    expect((await gauge(metrics.inboxPending))[0]?.value).toBe(1);
    expect(await gauge(metrics.deadLetterDepth)).toEqual([
      { value: 1, labels: { transport: 'memory' } },
    ]);
    await monitor.close();
    await transport.close();
  });
});
