import type { Target, TargetOptions } from '../target.js';

async function load() {
  try {
    return await import('@onceflow/adapter-bullmq');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(
        '--store bullmq needs the packages @onceflow/adapter-bullmq, bullmq and ioredis installed',
      );
    }
    throw err;
  }
}

/**
 * Opens the BullMQ queue `--queue` on `ONCEFLOW_REDIS_URL` (default `redis://127.0.0.1:6379`),
 * key prefix `ONCEFLOW_BULLMQ_PREFIX` (default `onceflow`): its transport, for the dead-letter
 * commands. No inbox. It connects but starts no consumer.
 */
export async function openBullmq(options: TargetOptions): Promise<Target> {
  const { createBullmqTransport } = await load();
  const transport = createBullmqTransport({
    url: options.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: options.env.ONCEFLOW_BULLMQ_PREFIX,
    queue: options.queue,
  });
  try {
    await transport.start();
  } catch (err) {
    await transport.close();
    throw err;
  }
  return { transport, close: () => transport.close() };
}
