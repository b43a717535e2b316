import type { Target, TargetOptions } from '../target.js';
import { loadAdapter, transportTarget } from './broker.js';

/**
 * Opens the Kafka work topic `--queue` (or `ONCEFLOW_QUEUE`) on `ONCEFLOW_KAFKA_BROKERS`
 * (comma-separated, default `127.0.0.1:9092`): its transport, for the dead-letter commands, which
 * act on `<topic>.dlq`. No inbox. Refuses a topic whose dead-letter topic does not exist rather
 * than creating it, so a typo fails loudly. It connects but joins no consumer group.
 */
export async function openKafka(options: TargetOptions): Promise<Target> {
  const { adapter, kafkajs } = await loadAdapter(
    'kafka',
    '@onceflow/adapter-kafka and kafkajs',
    async () => ({
      adapter: await import('@onceflow/adapter-kafka'),
      kafkajs: (await import('kafkajs')).default,
    }),
  );
  const brokers = (options.env.ONCEFLOW_KAFKA_BROKERS ?? '127.0.0.1:9092')
    .split(',')
    .map((b) => b.trim());
  const topic = options.queue;
  const admin = new kafkajs.Kafka({
    clientId: 'onceflow-cli',
    brokers,
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 2 },
  }).admin();
  try {
    await admin.connect();
    const topics = await admin.listTopics();
    const { dlq } = adapter.topicNames(topic, 0);
    if (!topics.includes(dlq))
      throw new Error(
        `no Kafka topic "${dlq}" at ${brokers.join(',')} (set --queue or ONCEFLOW_QUEUE to the work topic)`,
      );
  } finally {
    await admin.disconnect().catch(() => {});
  }
  return transportTarget(
    adapter.createKafkaTransport({ topic, brokers, clientId: 'onceflow-cli', createTopics: false }),
  );
}
