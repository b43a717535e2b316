import { randomBytes } from 'node:crypto';
import { createKafkaTransport, defaultBrokers, removeKafkaTopology } from '@onceflow/adapter-kafka';
import { describeBrokerDeadLetters } from './broker-dead-letters.js';

// The shared Kafka (`pnpm brokers:up kafka`); a topic set of this run's own, deleted afterwards.
const brokers = defaultBrokers();
const topic = `onceflow-cli-${randomBytes(4).toString('hex')}`;
const options = { topic, brokers, partitions: 1, fetchWaitMs: 200, sessionTimeoutMs: 6_000 };

describeBrokerDeadLetters({
  store: 'kafka',
  queue: topic,
  env: { ONCEFLOW_KAFKA_BROKERS: brokers.join(',') },
  transport: createKafkaTransport(options),
  cleanup: () => removeKafkaTopology(options),
  missingMessage: (t) => `no Kafka topic "${t}.dlq"`,
  timeoutMs: 30_000,
});
