import type { Target, TargetOptions } from '../target.js';
import { loadAdapter, transportTarget } from './broker.js';

/**
 * Opens the BullMQ queue `--queue` on `ONCEFLOW_REDIS_URL` (default `redis://127.0.0.1:6379`),
 * key prefix `ONCEFLOW_BULLMQ_PREFIX` (default `onceflow`): its transport, for the dead-letter
 * commands. No inbox. It connects but starts no consumer.
 */
export async function openBullmq(options: TargetOptions): Promise<Target> {
  const { createBullmqTransport } = await loadAdapter(
    'bullmq',
    '@onceflow/adapter-bullmq, bullmq and ioredis',
    () => import('@onceflow/adapter-bullmq'),
  );
  return transportTarget(
    createBullmqTransport({
      url: options.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: options.env.ONCEFLOW_BULLMQ_PREFIX,
      queue: options.queue,
    }),
  );
}
