import {
  brokerCall,
  checkRetryDelay,
  createLifecycle,
  createSubscriptions,
  dedupeKeyOf,
  parseConsumeOptions,
} from '@onceflow/core/kit';
import type { Transport, TransportCapabilities } from '@onceflow/core';
import type { Channel } from 'amqplib';
import { parseRabbitMqOptions, type RabbitMqTransportOptions } from './config.js';
import { startConsumer } from './consumer.js';
import { createDeadLetters } from './dead-letters.js';
import { createLink } from './link.js';
import { toWorkMessage } from './marshal.js';
import { createPublisher } from './publisher.js';
import {
  declareTopology,
  type QueueType,
  queueNames,
  resolveQueueType,
  retryQueueOptions,
} from './topology.js';

/** A transport over one RabbitMQ work queue and the queues derived from it. */
export interface RabbitMqTransport extends Transport {
  readonly name: 'rabbitmq';
  readonly queue: string;
}

const DURABILITY =
  'publish resolves once the broker confirmed each message (publisher confirms) as a persistent message in a durable queue: on quorum queues, once a majority of the nodes wrote it to disk; on a classic queue, once the one node holding it did';

/**
 * The onceflow Transport on RabbitMQ (amqplib): durable quorum queues, persistent messages,
 * pipelined publisher confirms, `mandatory` publishing, per-delay TTL retry queues that dead-letter
 * back to the work queue, and a dead-letter queue with its API. No I/O in the factory: `start()`
 * declares the topology (idempotent), and so does the first `publish`, `consume` or dead-letter
 * call made without it. Connections come back by themselves after a broker restart;
 * while the broker is unreachable, `publish` rejects with `TransportUnavailableError` (the
 * receiver answers 503).
 *
 * RabbitMQ has no broker-side dedupe: a re-publish of one event is delivered twice, and the
 * worker's processed-guard keeps its effect once.
 *
 * @example
 * const transport = createRabbitMqTransport({ queue: 'payments' });
 * await transport.start();
 * await transport.publish([{ envelope }]);
 */
export function createRabbitMqTransport(options: RabbitMqTransportOptions): RabbitMqTransport {
  const config = parseRabbitMqOptions(options);
  const names = queueNames(config.queue);
  const link = createLink({
    url: config.url,
    name: `${config.connectionName}:${config.queue}`,
    minMs: config.reconnectMinMs,
    maxMs: config.reconnectMaxMs,
    logger: config.logger,
  });
  const publisher = createPublisher(link, config.maxUnconfirmed);
  const subscriptions = createSubscriptions();
  const declaredRetry = new Map<number, Promise<void>>();
  const maxDelayMs = config.retryDelaysMs.at(-1) ?? 0;
  let queueType: QueueType | undefined;

  const capabilities: TransportCapabilities = {
    brokerDedupe: false,
    orderingPerKey: false,
    lock: { scope: 'consumer', maxMs: config.consumerTimeoutMs },
    maxDelayMs,
    maxMessageBytes: config.maxMessageBytes,
    durability: DURABILITY,
  };

  const withChannel = <T>(what: string, body: (ch: Channel) => Promise<T>): Promise<T> =>
    brokerCall(`rabbitmq ${what}`, async () => {
      const ch = await (await link.connection()).createChannel();
      ch.on('error', () => {});
      try {
        return await body(ch);
      } finally {
        await ch.close().catch(() => {});
      }
    });

  /** Declares the topology once, on the first operation that needs it (`start()` or not). */
  const lifecycle = createLifecycle({
    name: `rabbitmq transport ${config.queue}`,
    start: () =>
      withChannel('start', async (ch) => {
        queueType = resolveQueueType(config.queueType, link.serverVersion);
        await declareTopology(ch, names, queueType);
      }),
    close: async () => {
      await subscriptions.closeAll();
      await publisher.close();
      await link.close();
    },
  });

  /** The smallest bucket not shorter than `delayMs`, its queue declared once per transport. */
  const retryQueue = async (delayMs: number): Promise<string> => {
    checkRetryDelay(delayMs, maxDelayMs);
    if (delayMs === 0) return names.work;
    const bucket = config.retryDelaysMs.find((d) => d >= delayMs) ?? maxDelayMs;
    let declared = declaredRetry.get(bucket);
    if (!declared) {
      declared = withChannel('declare retry queue', async (ch) => {
        await ch.assertQueue(
          names.retry(bucket),
          retryQueueOptions(names, queueType ?? 'quorum', bucket),
        );
      });
      declaredRetry.set(bucket, declared);
      declared.catch(() => declaredRetry.delete(bucket));
    }
    await declared;
    return names.retry(bucket);
  };

  return {
    name: 'rabbitmq',
    queue: config.queue,
    capabilities,
    deadLetters: createDeadLetters({
      link,
      names,
      logger: config.logger,
      ready: () => lifecycle.start('deadLetters'),
    }),
    start: () => lifecycle.start(),

    async publish(messages) {
      if (messages.length === 0) return;
      const out = messages.map((m) =>
        toWorkMessage(
          names.work,
          { envelope: m.envelope, dedupeKey: dedupeKeyOf(m), attempt: 1 },
          config.maxMessageBytes,
        ),
      );
      await lifecycle.start('publish');
      await publisher.send(out);
    },

    async consume(handler, consumeOptions) {
      const { concurrency } = parseConsumeOptions(consumeOptions, capabilities);
      await lifecycle.start('consume');
      const consumer = await brokerCall('rabbitmq consume', () =>
        startConsumer({
          ...config,
          link,
          names,
          handler,
          concurrency,
          send: (m) => publisher.send(m),
          retryQueue,
        }),
      );
      return subscriptions.track(() => consumer.close());
    },

    close: () => lifecycle.close(),
  };
}
