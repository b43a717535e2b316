import { createKafkaTransport, defaultBrokers, removeKafkaTopology } from '@onceflow/adapter-kafka';
import { createRabbitMqTransport, deleteRabbitMqQueues } from '@onceflow/adapter-rabbitmq';
import { silentLogger, type Transport } from '@onceflow/core';

export type BrokerName = 'rabbitmq' | 'kafka';

/** Quick group joins and shutdowns for tests. */
const kafkaOptions = (topic: string) => ({
  topic,
  brokers: defaultBrokers(),
  partitions: 2,
  retryTiersMs: [1_000, 60_000],
  sessionTimeoutMs: 6_000,
  rebalanceTimeoutMs: 10_000,
  heartbeatIntervalMs: 500,
  fetchWaitMs: 200,
  logger: silentLogger,
});

/** A transport over the shared broker (RabbitMQ 5672, Kafka 9092), on the test's own queue or topic. */
export function brokerTransport(broker: BrokerName, name: string): Transport {
  return broker === 'rabbitmq'
    ? createRabbitMqTransport({ queue: name })
    : createKafkaTransport(kafkaOptions(name));
}

/** Removes the test's queue or topic with everything derived from it. */
export async function removeBrokerQueue(broker: BrokerName, name: string): Promise<void> {
  if (broker === 'rabbitmq') await deleteRabbitMqQueues({ queue: name });
  else await removeKafkaTopology(kafkaOptions(name));
}
