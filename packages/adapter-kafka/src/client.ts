import { Kafka, type LogEntry, logLevel } from 'kafkajs';
import type { KafkaConfig } from './config.js';

/** kafkajs messages that restate a choice this adapter made on purpose. */
const EXPECTED = ['Limiting retries for the idempotent producer'];

/**
 * A kafkajs client for `config`, its logs (warn and above) routed to `config.logger`. kafkajs
 * logs recoverable protocol errors at ERROR; they are passed on as warnings, since the adapter
 * reports what it could not recover from itself.
 */
export function createClient(config: KafkaConfig, connectionTimeout = 3_000): Kafka {
  const { logger } = config;
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    connectionTimeout,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, log }: LogEntry) => {
        const { message, timestamp: _t, logger: _l, ...rest } = log;
        if (EXPECTED.some((m) => message.startsWith(m))) return;
        logger.warn({ kafkajs: namespace, ...rest }, message);
      },
  });
}
