import {
  assertEncodesWithin,
  brokerCall,
  checkRetryDelay,
  createLifecycle,
  createSubscriptions,
  dedupeKeyOf,
  parseConsumeOptions,
  publishDeadline,
} from '@onceflow/core/kit';
import {
  type BacklogProbe,
  type BrokerDeadLetters,
  ConfigError,
  type ConsumeOptions,
  type Delivery,
  type Subscription,
  type HealthCheck,
  type OutgoingMessage,
  type TopologySetup,
  type Transport,
  type TransportCapabilities,
} from '@onceflow/core';
import type { Channel, Message } from 'amqplib';
import { readBacklog } from './backlog.js';
import { parseRabbitMqOptions, type RabbitMqTransportOptions } from './config.js';
import { startConsumer } from './consumer.js';
import { receiveDeadLetter } from './dead-letters.js';
import { type ConsumerChannel, type DeliveryDeps, receiveWork } from './delivery.js';
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
export interface RabbitMqTransport
  extends Transport,
    TopologySetup,
    BrokerDeadLetters,
    BacklogProbe,
    HealthCheck {
  readonly name: 'rabbitmq';
  readonly queue: string;
  /**
   * Opens and closes a channel on the transport's connection (connecting if needed), for
   * readiness probes: rejects with `TransportUnavailableError` while the broker is unreachable.
   * Declares nothing.
   */
  check(signal?: AbortSignal): Promise<void>;
}

const DURABILITY =
  'publish resolves once the broker confirmed each message (publisher confirms) as a persistent message in a durable queue: on quorum queues, once a majority of the nodes wrote it to disk; on a classic queue, once the one node holding it did';

/** The broker refused a declaration because the queue exists with other arguments (406). */
const inequivalent = (err: unknown): boolean =>
  (err as { code?: unknown }).code === 406 ||
  /PRECONDITION_FAILED/.test(String((err as Error).message));

const mismatch = (err: unknown): ConfigError =>
  new ConfigError(
    `rabbitmq: the queue exists with other arguments than this transport declares (queueType, deliveryLimit as x-delivery-limit): ${(err as Error).message}. Use the values it was declared with, or delete and re-declare it (deleteRabbitMqQueues)`,
  );

/**
 * The onceflow Transport on RabbitMQ (amqplib): durable quorum queues, persistent messages,
 * pipelined publisher confirms, `mandatory` publishing, per-delay TTL retry queues that dead-letter
 * back to the work queue, and `<queue>.dlq`, the broker's dead-letter destination past
 * `deliveryLimit`, read back by `consumeDeadLetters`. No I/O in the factory: `start()` declares the
 * topology (idempotent), and so does the first `publish`, `consume` or `consumeDeadLetters` made
 * without it. Connections come back by themselves after a broker restart; while the broker is
 * unreachable, `publish` rejects with `TransportUnavailableError` within `publishTimeoutMs`, and
 * at once while it is known down (the receiver answers 503; see `publishDeadline`).
 *
 * RabbitMQ has no broker-side dedupe: a re-publish of one event is delivered twice, and the
 * worker's record guard keeps its effect once.
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
  const deadline = publishDeadline({
    name: `rabbitmq publish to ${config.queue}`,
    timeoutMs: config.publishTimeoutMs,
  });
  const subscriptions = createSubscriptions();
  const declaredRetry = new Map<string, Promise<void>>();
  const maxDelayMs = config.retryDelaysMs.at(-1) ?? 0;
  let queueType: QueueType | undefined;

  const capabilities: TransportCapabilities = {
    brokerDedupe: false,
    orderingPerKey: false,
    lock: { scope: 'consumer', ms: config.lockMs },
    maxDelayMs,
    maxMessageBytes: config.maxMessageBytes,
    deliveryLimit: config.deliveryLimit,
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
        await declareTopology(ch, names, {
          type: queueType,
          deliveryLimit: config.deliveryLimit,
        }).catch((err: unknown) => {
          throw inequivalent(err) ? mismatch(err) : err;
        });
      }),
    close: async () => {
      await subscriptions.closeAll();
      await publisher.close();
      await link.close();
    },
  });

  /** The smallest bucket of `target` not shorter than `delayMs`, declared once per transport. */
  const retryQueue = async (target: string, delayMs: number): Promise<string> => {
    checkRetryDelay(delayMs, maxDelayMs);
    if (delayMs === 0) return target;
    const bucket = config.retryDelaysMs.find((d) => d >= delayMs) ?? maxDelayMs;
    const name = names.retry(bucket, target);
    let declared = declaredRetry.get(name);
    if (!declared) {
      declared = withChannel('declare retry queue', async (ch) => {
        await ch.assertQueue(name, retryQueueOptions(target, queueType ?? 'quorum', bucket));
      });
      declaredRetry.set(name, declared);
      declared.catch(() => declaredRetry.delete(name));
    }
    await declared;
    return name;
  };

  const toAmqp = (m: OutgoingMessage) =>
    toWorkMessage(
      names.work,
      { envelope: m.envelope, dedupeKey: dedupeKeyOf(m), attempt: 1 },
      config.maxMessageBytes,
      config.wireFormat,
    );

  const deliveryDeps: DeliveryDeps = {
    names,
    maxMessageBytes: config.maxMessageBytes,
    wireFormat: config.wireFormat,
    deliveryLimit: config.deliveryLimit,
    maxDelayMs,
    logger: config.logger,
    send: (m) => publisher.send(m, (amqp) => amqp),
    retryQueue,
  };

  /** A consumer of `queue`, after the topology is declared; closed with the transport. */
  const subscribe = async (
    what: 'consume' | 'consumeDeadLetters',
    queue: string,
    receive: (on: ConsumerChannel, msg: Message) => Promise<void>,
    options: ConsumeOptions,
  ): Promise<Subscription> => {
    const { concurrency } = parseConsumeOptions(options);
    await lifecycle.start(what);
    const consumer = await brokerCall(`rabbitmq ${what}`, () =>
      startConsumer({ ...config, link, queue, receive, concurrency }),
    );
    return subscriptions.track(() => consumer.close());
  };

  return {
    name: 'rabbitmq',
    destination: config.queue,
    queue: config.queue,
    capabilities,
    start: () => lifecycle.start(),

    async check() {
      lifecycle.assertOpen('check');
      await withChannel('check', async () => {});
    },

    async publish(messages) {
      if (messages.length === 0) return;
      if (config.wireFormat !== 'onceflow') {
        // Encoding checks every size before the first message goes.
        const encoded = messages.map(toAmqp);
        await deadline.run(async () => {
          await lifecycle.start('publish');
          await publisher.send(encoded, (amqp) => amqp);
        });
        return;
      }
      // Every size is checked before the first message goes; each is encoded as the window lets it go.
      for (const m of messages) assertEncodesWithin(m.envelope, config.maxMessageBytes);
      await deadline.run(async () => {
        await lifecycle.start('publish');
        await publisher.send(messages, toAmqp);
      });
    },

    async backlog() {
      await lifecycle.start('backlog');
      return readBacklog(names, config.retryDelaysMs, withChannel);
    },

    consume: (handler: (delivery: Delivery) => Promise<void>, options: ConsumeOptions) =>
      subscribe('consume', names.work, receiveWork(deliveryDeps, handler), options),

    consumeDeadLetters: (handler: (delivery: Delivery) => Promise<void>, options: ConsumeOptions) =>
      subscribe(
        'consumeDeadLetters',
        names.deadLetter,
        receiveDeadLetter(deliveryDeps, handler),
        options,
      ),

    close: () => lifecycle.close(),
  };
}
