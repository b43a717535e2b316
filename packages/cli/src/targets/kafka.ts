import type { TargetOptions, TransportTarget } from '../target.js';
import { loadPackages, transportTarget } from './broker.js';

/**
 * `--to kafka`: the Kafka work topic `--queue` on `ONCEFLOW_KAFKA_BROKERS` (comma-separated,
 * default `127.0.0.1:9092`). Refuses a topic that does not exist rather than creating it, so a
 * typo fails loudly. It produces only: it joins no consumer group.
 */
export async function openKafka(options: TargetOptions): Promise<TransportTarget> {
  const { adapter, kafkajs } = await loadPackages(
    '--to kafka',
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
    if (!(await admin.listTopics()).includes(topic))
      throw new Error(
        `no Kafka topic "${topic}" at ${brokers.join(',')} (set --queue or ONCEFLOW_QUEUE to the work topic)`,
      );
  } finally {
    await admin.disconnect().catch(() => {});
  }
  return transportTarget(
    adapter.createKafkaTransport({ topic, brokers, clientId: 'onceflow-cli', createTopics: false }),
    `Kafka topic "${topic}"`,
  );
}
