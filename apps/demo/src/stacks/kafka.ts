import { createKafkaTransport, removeKafkaTopology } from '@onceflow/adapter-kafka';
import { createLogger } from '@onceflow/core';
import { DEMO_LOCK_MS } from '../lock.js';
import type { Stack, StackOptions } from '../stack.js';
import { openPostgresStores, stackOnPostgres } from './postgres-stores.js';

/**
 * Kafka (`$ONCEFLOW_KAFKA_BROKERS`, else 127.0.0.1:9092) for the topic `demo-<runId>`, with inbox,
 * processed marks and ledger in PostgreSQL. A short session timeout lets a killed worker's
 * partitions move to its successor quickly. The run's owner deletes the topic, its retry and
 * dead-letter topics and the consumer group on close.
 */
export async function kafkaStack(options: StackOptions): Promise<Stack> {
  const stores = await openPostgresStores(options);
  const config = {
    topic: `demo-${options.runId}`,
    partitions: 4,
    sessionTimeoutMs: 6_000,
    lockMs: DEMO_LOCK_MS,
    heartbeatIntervalMs: 500,
    fetchWaitMs: 200,
    logger: createLogger({ level: 'error' }),
  };
  return stackOnPostgres({
    broker: 'kafka',
    options,
    stores,
    transport: createKafkaTransport(config),
    remove: () => removeKafkaTopology(config),
  });
}
