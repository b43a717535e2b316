import { Kafka, type LogEntry, logLevel } from 'kafkajs';
import type { KafkaConfig } from './config.js';

/** kafkajs messages that restate a choice this adapter made on purpose. */
const EXPECTED = ['Limiting retries for the idempotent producer'];

/** A client's socket timeouts, in ms: connecting (default 3 000) and one request (default 30 000). */
export interface ClientTimeouts {
  readonly connectionMs?: number | undefined;
  readonly requestMs?: number | undefined;
}

/**
 * A kafkajs client for `config`, its logs (warn and above) routed to `config.logger`. kafkajs
 * logs recoverable protocol errors at ERROR; they are passed on as warnings, since the adapter
 * reports what it could not recover from itself.
 */
export function createClient(config: KafkaConfig, timeouts: ClientTimeouts = {}): Kafka {
  const { logger } = config;
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    connectionTimeout: timeouts.connectionMs ?? 3_000,
    requestTimeout: timeouts.requestMs ?? 30_000,
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
