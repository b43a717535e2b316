import { waitUntil } from '@onceflow/conformance';
import {
  createEnvelope,
  createProbes,
  createWorker,
  defineHandler,
  shutdown,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { describe, expect, it } from 'vitest';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '../src/index.js';
import { useTestConnection } from './crashing-consumer.js';

const { conn } = useTestConnection();

/** Ready plus unacknowledged messages on `queue`: 0 once every delivery was acked. */
async function depth(queue: string): Promise<number> {
  const ch = await conn().createChannel();
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await ch.close();
  }
}

describe('probes and shutdown on rabbitmq', () => {
  it('shutdown lets every in-flight delivery finish and be acked before the transport closes', async () => {
    const queue = `onceflow-drain-${Date.now()}`;
    const transport = createRabbitMqTransport({ queue, lockMs: 10_000 });
    const records = createMemoryStore();
    const started: string[] = [];
    const done: string[] = [];
    const worker = createWorker({
      transport,
      records,
      concurrency: 5,
      handlers: [
        defineHandler({
          type: 'slow',
          async handle(_e, ctx) {
            started.push(ctx.envelope.id);
            await new Promise((resolve) => setTimeout(resolve, 800));
            done.push(ctx.envelope.id);
          },
        }),
      ],
    });
    const probes = createProbes({ transport, worker, timeoutMs: 5_000 });
    await worker.start();
    expect(await probes.ready.run()).toMatchObject({
      status: 'pass',
      checks: { transport: { status: 'pass' }, worker: { status: 'pass' } },
    });
    const events = Array.from({ length: 5 }, (_, i) =>
      createEnvelope({ id: `evt_drain_${i}`, source: 'test', type: 'slow', payload: { i } }),
    );
    await transport.publish(events.map((envelope) => ({ envelope })));
    await waitUntil(() => started.length === 5, {
      timeoutMs: 20_000,
      message: 'five handlers running',
    });

    const result = await shutdown({ worker, close: [transport], deadlineMs: 20_000 });
    expect(result).toMatchObject({ timedOut: false, deliveriesLeft: 0, notClosed: [] });
    expect(done.sort()).toEqual(events.map((e) => e.id).sort());
    for (const e of events) expect((await records.get('test', e.id))?.state).toBe('completed');
    // The transport's connection is closed: anything unacked would be ready again by now.
    expect(await depth(queue)).toBe(0);
    expect((await probes.ready.run()).checks.worker?.status).toBe('fail');
    expect((await probes.ready.run()).checks.transport?.status).toBe('fail');
    await deleteRabbitMqQueues({ queue });
  }, 60_000);

  it('readiness fails within its time limit while the broker is unreachable', async () => {
    // Port 1 on loopback: nothing listens; the transport keeps reconnecting.
    const transport = createRabbitMqTransport({
      queue: `onceflow-unreachable-${Date.now()}`,
      url: 'amqp://guest:guest@127.0.0.1:1',
    });
    const report = await createProbes({ transport, timeoutMs: 1_500 }).ready.run();
    expect(report.status).toBe('fail');
    expect(report.checks.transport?.status).toBe('fail');
    expect(report.checks.transport?.durationMs).toBeLessThan(10_000);
    await transport.close();
  }, 30_000);
});
