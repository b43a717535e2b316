import type { TargetOptions, TransportTarget } from '../target.js';
import { loadPackages, transportTarget } from './broker.js';

/**
 * `--to bullmq`: the BullMQ queue `--queue` on `ONCEFLOW_REDIS_URL` (default
 * `redis://127.0.0.1:6379`), key prefix `ONCEFLOW_BULLMQ_PREFIX` (default `onceflow`). BullMQ
 * queues exist implicitly: a misspelt one is not refused, its jobs simply wait for a worker that
 * never comes. Starts no worker.
 */
export async function openBullmq(options: TargetOptions): Promise<TransportTarget> {
  const { createBullmqTransport } = await loadPackages(
    '--to bullmq',
    '@onceflow/adapter-bullmq, bullmq and ioredis',
    () => import('@onceflow/adapter-bullmq'),
  );
  return transportTarget(
    createBullmqTransport({
      url: options.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: options.env.ONCEFLOW_BULLMQ_PREFIX,
      queue: options.queue,
    }),
    `BullMQ queue "${options.queue}"`,
  );
}
