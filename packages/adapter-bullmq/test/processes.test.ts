import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { testEnvelope, waitUntil } from '@onceflow/conformance';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullmqTransport, deleteBullmqQueue, jobIdOf } from '../src/index.js';
import { guardedEffect } from './effect.js';
import { redisUrl, runPrefix } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/killed-consumer.ts', import.meta.url));
const url = redisUrl();
const prefix = runPrefix();
const queue = 'killed';
const redis = new Redis(url);
const effect = guardedEffect(redis, prefix);
const closers: (() => Promise<void>)[] = [];

interface Report {
  type: 'ready' | 'delivery';
  id?: string;
  attempt?: number;
  effected?: boolean;
  /** When the parent received it. */
  at: number;
}

afterAll(async () => {
  await deleteBullmqQueue({ url, prefix, queue });
  // The store's keys are `{<prefix>:records}:…`, the counters `<prefix>:effects:…`.
  for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) {
    const keys = await redis.keys(pattern);
    if (keys.length > 0) await redis.del(...keys);
  }
  await redis.quit();
});

describe('bullmq transport across processes', () => {
  it('redelivers a job whose consumer process was SIGKILLed mid-job (effect completed, not acked) after its lock expired, and the side effect happens once', async () => {
    const lockMs = 1000;
    const child: ChildProcess = fork(script, [url, prefix, queue, String(lockMs)], {
      execArgv: ['--conditions=@onceflow/source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const reports: Report[] = [];
    child.on('message', (m) => reports.push({ ...(m as Report), at: Date.now() }));
    try {
      await waitUntil(() => reports.some((r) => r.type === 'ready'), {
        timeoutMs: 20_000,
        message: 'the consumer process to be ready',
      });
      const transport = createBullmqTransport({ url, prefix, queue, stalledIntervalMs: 200 });
      closers.push(() => transport.close());
      const event = testEnvelope();
      // The child's lock is taken after this, however late its report reaches this process.
      const publishedAt = Date.now();
      await transport.publish([{ envelope: event }]);
      await waitUntil(() => reports.find((r) => r.type === 'delivery'), {
        timeoutMs: 10_000,
        message: 'the first delivery, in the child',
      });
      // When the child's lock runs out, at the earliest: BullMQ's lock key and what is left of it.
      const asked = Date.now();
      const left = await redis.pttl(
        `${prefix}:${queue}:${jobIdOf(`${event.source}:${event.id}`)}:lock`,
      );
      const lockEnds = asked + Math.max(0, left);
      child.kill('SIGKILL'); // its process ends: no settlement, no close, no lock release
      await exited;

      const got: { attempt: number; at: number; effected: boolean }[] = [];
      await transport.consume(
        async (d) => {
          const effected = await effect.apply(d);
          got.push({ attempt: d.attempt, at: Date.now(), effected });
          await d.ack();
        },
        { concurrency: 1 },
      );
      await waitUntil(() => got.length === 1, { timeoutMs: 10_000, message: 'the redelivery' });

      expect(reports.filter((r) => r.type === 'delivery')).toEqual([
        expect.objectContaining({ id: event.id, attempt: 1, effected: true }),
      ]);
      expect(got[0]).toMatchObject({ attempt: 2, effected: false });
      // Not before the child's lock ran out.
      expect((got[0]?.at ?? 0) - publishedAt, 'a lock of lockMs').toBeGreaterThanOrEqual(lockMs);
      expect(got[0]?.at ?? 0, 'after the lock key expired').toBeGreaterThanOrEqual(lockEnds);
      expect(await effect.count(event.id)).toBe(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const close of closers.splice(0)) await close();
    }
  }, 40_000);
});
