import type { TargetOptions, TransportTarget } from '../target.js';
import { loadPackages, transportTarget } from './broker.js';

/**
 * `--to rabbitmq`: the RabbitMQ queue `--queue` on `ONCEFLOW_AMQP_URL` (default
 * `amqp://guest:guest@127.0.0.1:5672`). Refuses a queue that does not exist rather than declaring
 * it, so a typo fails loudly. The transport declares the topology it publishes through with the
 * adapter's defaults, as every transport on the queue does; a queue declared with other arguments
 * (`queueType`, `deliveryLimit`) is refused by the broker, and the message says so. Starts no consumer.
 */
export async function openRabbitmq(options: TargetOptions): Promise<TransportTarget> {
  const { adapter, amqp } = await loadPackages(
    '--to rabbitmq',
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
    `RabbitMQ queue "${options.queue}"`,
  );
}
