import { createLogger } from '@onceflow/core';
import { type KafkaTransportOptions, defaultBrokers } from '../src/index.js';

/** The broker the tests use: `$ONCEFLOW_KAFKA_BROKERS`, else 127.0.0.1:9092. */
export const brokers = defaultBrokers();

/** Options that keep group joins and shutdowns quick in tests. */
export const testOptions = (topic: string): KafkaTransportOptions => ({
  topic,
  brokers,
  partitions: 2,
  retryTiersMs: [1_000, 60_000],
  sessionTimeoutMs: 6_000,
  rebalanceTimeoutMs: 10_000,
  heartbeatIntervalMs: 500,
  fetchWaitMs: 200,
  logger: createLogger({ level: process.env.ONCEFLOW_LOG_LEVEL ?? 'error' }),
});
