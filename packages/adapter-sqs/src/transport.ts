import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  brokerCall,
  createLifecycle,
  createSubscriptions,
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
import { TransportUnavailableError } from '@onceflow/core';
import { readBacklog } from './backlog.js';
import { parseSqsOptions, type SqsTransportOptions } from './config.js';
import { startConsumer } from './consumer.js';
import { createDeleteBatcher } from './delete-batcher.js';
import { MAX_DELAY_MS } from './delivery.js';
import { SqsPublishError } from './errors.js';
import { attemptOf, deadLetterAttemptOf, toOutgoing } from './marshal.js';
import { sendAll } from './publish.js';
import { ensureSqsQueues, type SqsQueues } from './queues.js';

/**
 * A transport over one SQS queue and its dead-letter queue: eager set-up with `start()`
 * (`TopologySetup`), the dead-letter queue read back with `consumeDeadLetters`
 * (`BrokerDeadLetters`), and the work queue's approximate counts from `backlog()`
 * (`BacklogProbe`). Its deliveries are `RenewableDelivery`s.
 */
export interface SqsTransport
  extends Transport,
    TopologySetup,
    BrokerDeadLetters,
    BacklogProbe,
    HealthCheck {
  readonly name: 'sqs';
  /**
   * Asks SQS for the work queue's ARN (setting the queues up first if no operation has yet), for
   * readiness probes: rejects with `TransportUnavailableError` when SQS does not answer.
   */
  check(signal?: AbortSignal): Promise<void>;
  /** The work queue's and dead-letter queue's names and URLs; set once the queues are set up. */
  readonly queues: SqsQueues | undefined;
}

/** SQS FIFO queues drop a repeated deduplication id for 5 minutes. */
export const FIFO_DEDUPE_WINDOW_MS = 5 * 60_000;

/**
 * One SQS queue as a `Transport`. FIFO (default): `MessageDeduplicationId` = sha-256 of the dedupe
 * key (5-minute broker dedupe), `MessageGroupId` = the envelope key (order per key). Standard
 * queues: no broker dedupe, no order; the worker's record guard keeps effects once. Locks are
 * visibility timeouts of `lockMs`, renewed (`renewLock`) and used for delayed retries with
 * `ChangeMessageVisibility`; `attempt` is `ApproximateReceiveCount`; acks are batched deletes.
 * After `deliveryLimit` receives the queue's redrive policy moves a message to the dead-letter
 * queue, which `consumeDeadLetters` reads with the same receive loop. The queues are set up on
 * the first `publish`, `consume` or `consumeDeadLetters`, or eagerly by `start()` (see
 * `ensureSqsQueues`); `close()` drains subscriptions and destroys a client it made.
 *
 * @example
 * const transport = createSqsTransport({ queue: 'orders', clientConfig: { region: 'eu-west-1' } });
 * await transport.publish([{ envelope }]);
 */
export function createSqsTransport(options: SqsTransportOptions): SqsTransport {
  const config = parseSqsOptions(options);
  let client: SQSClient | undefined = config.client;
  let queues: SqsQueues | undefined;
  const subscriptions = createSubscriptions();
  const deadline = publishDeadline({
    name: `sqs publish to ${config.queue}`,
    timeoutMs: config.publishTimeoutMs,
    // Entries SQS refused on their own merits are an answer: the queue is reachable.
    isOutage: (err) =>
      err instanceof TransportUnavailableError && !(err instanceof SqsPublishError),
  });

  const capabilities: TransportCapabilities = {
    brokerDedupe: config.fifo ? { windowMs: FIFO_DEDUPE_WINDOW_MS } : false,
    orderingPerKey: config.fifo,
    lock: { scope: 'message', ms: config.lockMs },
    maxDelayMs: MAX_DELAY_MS,
    maxMessageBytes: config.maxMessageBytes,
    deliveryLimit: config.deliveryLimit,
    durability:
      'publish resolves once SQS has acknowledged SendMessageBatch for every message: SQS has then stored it redundantly across several servers and availability zones',
  };

  /** Sets up the queues once, on the first operation; a failed set-up is tried again by the next. */
  const lifecycle = createLifecycle({
    name: `sqs transport ${config.queue}`,
    start: async () => {
      const c = client ?? new SQSClient(config.clientConfig ?? {});
      client = c;
      const q = await ensureSqsQueues(c, {
        queue: config.queue,
        fifo: config.fifo,
        deliveryLimit: config.deliveryLimit,
        create: config.createQueues,
      });
      queues = q;
      return {
        client: c,
        queues: q,
        deletes: createDeleteBatcher(c, q.url),
        deadLetterDeletes: createDeleteBatcher(c, q.deadLetterUrl),
      };
    },
    close: async () => {
      await subscriptions.closeAll();
      if (config.client === undefined) client?.destroy();
    },
  });
  /** The started client and queues (starting first if needed). */
  const ready = (op: string) => lifecycle.start(op);

  /** One consumer on the work queue or the dead-letter queue. */
  const subscribe = async (
    op: 'consume' | 'consumeDeadLetters',
    handler: (delivery: Delivery) => Promise<void>,
    consumeOptions: ConsumeOptions,
  ) => {
    const { concurrency } = parseConsumeOptions(consumeOptions);
    const started = await ready(op);
    const deadLetters = op === 'consumeDeadLetters';
    const consumer = startConsumer({
      client: started.client,
      url: deadLetters ? started.queues.deadLetterUrl : started.queues.url,
      deletes: deadLetters ? started.deadLetterDeletes : started.deletes,
      attemptOf: deadLetters ? deadLetterAttemptOf : attemptOf,
      fifo: config.fifo,
      handler,
      concurrency,
      lockMs: config.lockMs,
      waitTimeSeconds: config.waitTimeSeconds,
      logger: config.logger,
    });
    return subscriptions.track(() => consumer.close());
  };

  return {
    name: 'sqs',
    destination: config.queue,
    capabilities,
    get queues() {
      return queues;
    },

    start: async () => void (await lifecycle.start()),

    async check(signal) {
      const { client: c, queues: q } = await ready('check');
      const ask = new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['QueueArn'] });
      await brokerCall('sqs check', () => c.send(ask, { abortSignal: signal }));
    },

    async publish(messages) {
      if (messages.length === 0) return;
      const outgoing = messages.map((m) => toOutgoing(m, config.maxMessageBytes));
      await deadline.run(async (signal) => {
        const { client: c, queues: q } = await ready('publish');
        await sendAll({ client: c, url: q.url, fifo: config.fifo, signal }, outgoing);
      });
    },

    async backlog() {
      const { client: c, queues: q } = await ready('backlog');
      return readBacklog(c, q);
    },

    consume: (handler, consumeOptions) => subscribe('consume', handler, consumeOptions),
    consumeDeadLetters: (handler, consumeOptions) =>
      subscribe('consumeDeadLetters', handler, consumeOptions),

    close: () => lifecycle.close(),
  };
}
