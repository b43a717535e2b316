import type { Target, TargetOptions } from '../target.js';
import { loadAdapter, transportTarget } from './broker.js';

/**
 * Opens the RabbitMQ queue `--queue` on `ONCEFLOW_AMQP_URL` (default
 * `amqp://guest:guest@127.0.0.1:5672`): its transport, for the dead-letter commands. No inbox.
 * Refuses a queue that does not exist rather than declaring it, so a typo fails loudly. It
 * connects but starts no consumer.
 */
export async function openRabbitmq(options: TargetOptions): Promise<Target> {
  const { adapter, amqp } = await loadAdapter(
    'rabbitmq',
    '@onceflow/adapter-rabbitmq and amqplib',
    async () => ({
      adapter: await import('@onceflow/adapter-rabbitmq'),
      amqp: (await import('amqplib')).default,
    }),
  );
  const url = options.env.ONCEFLOW_AMQP_URL ?? adapter.defaultAmqpUrl();
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    await ch.checkQueue(options.queue).catch(() => {
      throw new Error(
        `no RabbitMQ queue "${options.queue}" at ${url.replace(/\/\/.*@/, '//')} (set --queue or ONCEFLOW_QUEUE)`,
      );
    });
  } finally {
    await conn.close().catch(() => {});
  }
  return transportTarget(
    adapter.createRabbitMqTransport({ url, queue: options.queue, connectionName: 'onceflow-cli' }),
  );
}
