import {
  brokerCall,
  createLifecycle,
  createSubscriptions,
  dedupeKeyOf,
  encodeWithinLimit,
  parseConsumeOptions,
} from '@onceflow/core/kit';
import type { Transport, TransportCapabilities } from '@onceflow/core';
import type { Admin } from 'kafkajs';
import { createClient } from './client.js';
import { type KafkaTransportOptions, resolveConfig, topicNames } from './config.js';
import { startConsumer } from './consumer.js';
import { createDeadLetterStore } from './dead-letters.js';
import { toRecord } from './marshal.js';
import { createPublisher } from './publisher.js';
import { ensureTopics } from './topology.js';

/** A transport over one Kafka work topic. */
export interface KafkaTransport extends Transport {
  readonly name: 'kafka';
  readonly topic: string;
  readonly groupId: string;
}

const DURABILITY =
  'publish resolves once the partition leader and all in-sync replicas have the record (idempotent producer, acks=all); with replication factor 1 that is one broker’s log, flushed by the OS, not fsynced per record';

/**
 * A Transport on one Kafka topic (kafkajs). Publishing: idempotent producer, `acks=all`, record
 * key = the envelope's ordering key, event id / dedupe key / attempt in headers; concurrent
 * publishes share one request. Consuming: a consumer group (`groupId`); a record's offset is
 * committed only after it is acked, dead-lettered or moved to a retry topic; records held by a
 * member that dies or is fenced are redelivered to another member. Retries go through retry
 * topics `<topic>.retry.<n>` consumed once due; dead letters through `<topic>.dlq`.
 *
 * No I/O in the factory; `start()` creates missing topics (unless `createTopics: false`) and
 * connects the producer, and so does the first `publish`, `consume` or dead-letter call made
 * without it. While no broker answers, `publish` rejects with
 * `TransportUnavailableError` after kafkajs's retries, and the producer reconnects on the next
 * request; a consumer that crashes is restarted by kafkajs until it rejoins.
 *
 * @example
 * const transport = createKafkaTransport({ topic: 'payments', brokers: ['127.0.0.1:9092'] });
 * await transport.start();
 * await transport.publish([{ envelope }]);
 */
export function createKafkaTransport(options: KafkaTransportOptions): KafkaTransport {
  const config = resolveConfig(options);
  const names = topicNames(config.topic, config.retryTiersMs.length);
  const kafka = createClient(config);
  const publisher = createPublisher(kafka);
  const subscriptions = createSubscriptions();
  let admin: Promise<Admin> | undefined;

  const getAdmin = () => {
    admin ??= brokerCall(`kafka connect to ${config.brokers}`, async () => {
      const a = kafka.admin();
      await a.connect();
      return a;
    }).catch((err: unknown) => {
      admin = undefined;
      throw err;
    });
    return admin;
  };
  /** Creates the topics (unless `createTopics: false`) and connects the producer, once. */
  const lifecycle = createLifecycle({
    name: `kafka transport ${config.topic}`,
    start: async () => {
      if (config.createTopics) {
        const a = await getAdmin();
        await brokerCall('kafka create topics', () => ensureTopics(a, config));
      }
      await publisher.connect();
    },
    close: async () => {
      await subscriptions.closeAll();
      await deadLetters.close();
      await publisher.close();
      const a = admin;
      admin = undefined;
      if (a) await (await a.catch(() => undefined))?.disconnect();
    },
  });
  const deadLetters = createDeadLetterStore({
    kafka,
    config,
    dlq: names.dlq,
    publisher,
    admin: async () => {
      await lifecycle.start('deadLetters');
      return getAdmin();
    },
  });

  const capabilities: TransportCapabilities = {
    brokerDedupe: false,
    orderingPerKey: false,
    lock: { scope: 'consumer', maxMs: config.rebalanceTimeoutMs },
    maxDelayMs: config.retryTiersMs.at(-1) ?? 0,
    maxMessageBytes: config.maxMessageBytes,
    durability: DURABILITY,
  };

  return {
    name: 'kafka',
    topic: config.topic,
    groupId: config.groupId,
    capabilities,
    deadLetters,

    start: () => lifecycle.start(),

    async publish(messages) {
      const records = messages.map((m) =>
        toRecord(m.envelope, encodeWithinLimit(m.envelope, config.maxMessageBytes), {
          dedupeKey: dedupeKeyOf(m),
          attempt: 1,
        }),
      );
      await lifecycle.start('publish');
      await publisher.send(config.topic, records);
    },

    async consume(handler, consumeOptions) {
      const { concurrency } = parseConsumeOptions(consumeOptions, capabilities);
      await lifecycle.start('consume');
      const subscription = await brokerCall('kafka start the consumer', () =>
        startConsumer({ kafka, config, publisher, handler, concurrency }),
      );
      return subscriptions.track(() => subscription.close());
    },

    close: () => lifecycle.close(),
  };
}
