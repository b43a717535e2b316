import { describe, expect, it } from 'vitest';
import {
  type BacklogProbe,
  type Transport,
  createBacklogMonitor,
  createEnvelope,
  createMetrics,
} from '../../src/index.js';
import { createMemoryBroker, createMemoryTransport } from '../../src/testing.js';

const envelope = (id: string) =>
  createEnvelope({ id, source: 's', type: 't', payload: {}, receivedAt: new Date() });

describe('backlog monitor', () => {
  it('sets ready, delayed and in-flight from the memory transport as they change', async () => {
    const metrics = createMetrics();
    const broker = createMemoryBroker();
    await using transport = createMemoryTransport({ broker, queue: 'backlog-mem' });
    await transport.publish(['a', 'b', 'c'].map((id) => ({ envelope: envelope(id) })));
    const monitor = createBacklogMonitor({ metrics, transports: [transport] });
    const states = async () =>
      Object.fromEntries(
        (await metrics.brokerMessages.get()).values.map((v) => [v.labels.state, v.value]),
      );
    expect(await monitor.runOnce()).toBe(1);
    expect(await states()).toEqual({ ready: 3, delayed: 0, 'in-flight': 0 });

    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let seen = 0;
    const sub = await transport.consume(
      async (d) => {
        seen++;
        if (d.envelope.id === 'a') return d.retry({ delayMs: 60_000 });
        if (d.envelope.id === 'b') await held;
        return d.ack();
      },
      { concurrency: 3 },
    );
    await expect.poll(() => seen).toBe(3);
    await monitor.runOnce();
    expect(await states()).toEqual({ ready: 0, delayed: 1, 'in-flight': 1 });
    const labels = (await metrics.brokerMessages.get()).values[0]?.labels;
    expect(labels).toMatchObject({ transport: 'memory', queue: 'backlog-mem' });
    release();
    await sub.close();
    await monitor.close();
  });

  it('keeps the gauges of a broker that fails and reads the others; refuses a transport without a probe', async () => {
    const metrics = createMetrics();
    await using healthy = createMemoryTransport({ queue: 'healthy' });
    let down = false;
    const flaky: Transport & BacklogProbe = {
      ...createMemoryTransport({ queue: 'flaky' }),
      name: 'flaky',
      async backlog() {
        if (down) throw new Error('broker unreachable');
        return { queue: 'flaky', ready: 7, lag: [{ partition: 0, lag: 7 }] };
      },
    };
    const monitor = createBacklogMonitor({ metrics, transports: [flaky, healthy] });
    expect(await monitor.runOnce()).toBe(2);
    down = true;
    expect(await monitor.runOnce()).toBe(1);
    const ready = (await metrics.brokerMessages.get()).values.find(
      (v) => v.labels.transport === 'flaky',
    );
    expect(ready).toMatchObject({ value: 7, labels: { state: 'ready', queue: 'flaky' } });
    expect((await metrics.consumerLag.get()).values).toEqual([
      { value: 7, labels: { transport: 'flaky', queue: 'flaky', partition: '0' } },
    ]);
    const { backlog: _none, ...bare } = healthy;
    expect(() => createBacklogMonitor({ metrics, transports: [bare] })).toThrow(
      /memory transport has no backlog/,
    );
  });
});
