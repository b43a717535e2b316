import {
  brokerCall,
  createLifecycle,
  createSubscriptions,
  dedupeKeyOf,
  parseConsumeOptions,
  publishDeadline,
} from '@onceflow/core/kit';
import type {
  BacklogProbe,
  BrokerDeadLetters,
  ConsumeOptions,
  Delivery,
  HealthCheck,
  TopologySetup,
  Transport,
  TransportCapabilities,
} from '@onceflow/core';
import type { Admin } from 'kafkajs';
import { readBacklog } from './backlog.js';
import { createClient } from './client.js';
import { type KafkaTransportOptions, resolveConfig, topicNames } from './config.js';
import { startConsumer } from './consumer.js';
import { encodeRecord } from './marshal.js';
import { createPublisher } from './publisher.js';
import { type ConsumerRoute, deadLetterRoute, workRoute } from './routes.js';
import { ensureTopics } from './topology.js';

/** A transport over one Kafka work topic, its retry topics and its dead-letter topic. */
export interface KafkaTransport
  extends Transport,
    TopologySetup,
    BrokerDeadLetters,
    BacklogProbe,
    HealthCheck {
  readonly name: 'kafka';
  readonly topic: string;
  readonly groupId: string;
  /**
   * Asks the cluster for its brokers (admin `describeCluster`, connecting if needed), for
   * readiness probes: rejects with `TransportUnavailableError` when no broker answers.
   */
  check(signal?: AbortSignal): Promise<void>;
}

const DURABILITY =
  'publish resolves once the partition leader and all in-sync replicas have the record (idempotent producer, acks=all); with replication factor 1 that is one broker’s log, flushed by the OS, not fsynced per record';

const SETTLEMENT =
  'ack() and retry() resolve once the settlement is recorded in the consumer’s memory (a retry’s copy is on its retry or dead-letter topic first), not once the offset is committed: offsets are committed in batches, every commitIntervalMs while a batch is handled, when the batch is done, when a rebalance begins and on close(), and only ever past settled records; a process that dies before the commit has its settled but uncommitted records delivered again, which the worker’s record guard answers as duplicates';

/**
 * A Transport on one Kafka topic (kafkajs). Publishing: idempotent producer, `acks=all`, record
 * key = the envelope's ordering key, event id / dedupe key / attempt in headers; concurrent
 * publishes share one request. Consuming: a consumer group (`groupId`); a record's offset is
 * committed only after it is acked or its retry copy is stored, in batches (see `settlement` in
 * the capabilities: `ack()` does not wait for the commit); records held by a member that
 * dies or is fenced are redelivered to another member (with the same attempt). Retries go through
 * retry topics `<topic>.retry.<n>` consumed once due; a retry from the `deliveryLimit`-th delivery
 * goes to `<topic>.dlq` instead, which `consumeDeadLetters` reads in group `<groupId>.dlq`.
 *
 * No I/O in the factory; `start()` creates missing topics (unless `createTopics: false`) and
 * connects the producer, and so does the first `publish`, `consume` or `consumeDeadLetters` made
 * without it. While no broker answers, `publish` rejects with `TransportUnavailableError` within
 * `publishTimeoutMs`, and at once while the broker is known down (see `publishDeadline`); the
 * producer reconnects on the next request; a consumer that crashes is restarted by kafkajs until
 * it rejoins.
 *
 * @example
 * const transport = createKafkaTransport({ topic: 'payments', brokers: ['127.0.0.1:9092'] });
 * await transport.start();
 * await transport.publish([{ envelope }]);
 */
export function createKafkaTransport(options: KafkaTransportOptions): KafkaTransport {
  const config = resolveConfig(options);
  const kafka = createClient(config);
  const publishTimeoutMs = config.publishTimeoutMs;
  const publisher = createPublisher(
    createClient(config, {
      connectionMs: publishTimeoutMs,
      requestMs: Math.max(1_000, publishTimeoutMs),
    }),
    publishTimeoutMs,
  );
  const deadline = publishDeadline({
    name: `kafka publish to ${config.topic}`,
    timeoutMs: publishTimeoutMs,
  });
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
      await publisher.close();
      const a = admin;
      admin = undefined;
      if (a) await (await a.catch(() => undefined))?.disconnect();
    },
  });

  const capabilities: TransportCapabilities = {
    brokerDedupe: false,
    orderingPerKey: false,
    lock: { scope: 'consumer', ms: config.lockMs },
    maxDelayMs: config.retryTiersMs.at(-1) ?? 0,
    maxMessageBytes: config.maxMessageBytes,
    deliveryLimit: config.deliveryLimit,
    durability: DURABILITY,
    settlement: SETTLEMENT,
  };

  const subscribe = async (
    op: string,
    route: ConsumerRoute,
    handler: (delivery: Delivery) => Promise<void>,
    consumeOptions: ConsumeOptions,
  ) => {
    const { concurrency } = parseConsumeOptions(consumeOptions);
    await lifecycle.start(op);
    const subscription = await brokerCall(`kafka ${op}: start the consumer`, () =>
      startConsumer({ kafka, config, route, publisher, handler, concurrency }),
    );
    return subscriptions.track(() => subscription.close());
  };

  return {
    name: 'kafka',
    destination: config.topic,
    topic: config.topic,
    groupId: config.groupId,
    capabilities,

    start: () => lifecycle.start(),

    async check() {
      lifecycle.assertOpen('check');
      const a = await getAdmin();
      await brokerCall('kafka check', () => a.describeCluster());
    },

    async publish(messages) {
      const records = messages.map((m) =>
        encodeRecord(m.envelope, config.wireFormat, config.maxMessageBytes, {
          dedupeKey: dedupeKeyOf(m),
          attempt: 1,
        }),
      );
      await deadline.run(async (signal) => {
        await lifecycle.start('publish');
        await publisher.send(config.topic, records, signal);
      });
    },

    async backlog() {
      await lifecycle.start('backlog');
      const admin = await getAdmin();
      const names = topicNames(config.topic, config.retryTiersMs.length);
      return brokerCall('kafka backlog', () =>
        readBacklog(admin, { groupId: config.groupId, ...names }),
      );
    },

    consume: (handler, consumeOptions) =>
      subscribe('consume', workRoute(config), handler, consumeOptions),

    consumeDeadLetters: (handler, consumeOptions) =>
      subscribe('consumeDeadLetters', deadLetterRoute(config), handler, consumeOptions),

    close: () => lifecycle.close(),
  };
}
