import type { Target, TargetOptions } from '../target.js';

async function load() {
  try {
    return {
      adapter: await import('@onceflow/adapter-rabbitmq'),
      amqp: (await import('amqplib')).default,
    };
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(
        '--store rabbitmq needs the packages @onceflow/adapter-rabbitmq and amqplib installed',
      );
    }
    throw err;
  }
}

/**
 * Opens the RabbitMQ queue `--queue` on `ONCEFLOW_AMQP_URL` (default
 * `amqp://guest:guest@127.0.0.1:5672`): its transport, for the dead-letter commands. No inbox.
 * Refuses a queue that does not exist rather than declaring it, so a typo fails loudly. It
 * connects but starts no consumer.
 */
export async function openRabbitmq(options: TargetOptions): Promise<Target> {
  const { adapter, amqp } = await load();
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
  const transport = adapter.createRabbitMqTransport({
    url,
    queue: options.queue,
    connectionName: 'onceflow-cli',
  });
  try {
    await transport.start();
  } catch (err) {
    await transport.close();
    throw err;
  }
  return { transport, close: () => transport.close() };
}
