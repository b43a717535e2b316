import { SQSClient } from '@aws-sdk/client-sqs';
import { createLifecycle, createSubscriptions, parseConsumeOptions } from '@onceflow/core/kit';
import type { Transport, TransportCapabilities } from '@onceflow/core';
import { parseSqsOptions, type SqsTransportOptions } from './config.js';
import { startConsumer } from './consumer.js';
import { createDeadLetters } from './dead-letters.js';
import { createDeleteBatcher } from './delete-batcher.js';
import { MAX_DELAY_MS, MAX_VISIBILITY_MS } from './delivery.js';
import { toOutgoing } from './marshal.js';
import { sendAll } from './publish.js';
import { ensureSqsQueues, type SqsQueues } from './queues.js';

/** A transport over one SQS queue and its dead-letter queue. */
export interface SqsTransport extends Transport {
  readonly name: 'sqs';
  /** The work queue's and dead-letter queue's names and URLs; set by `start()`. */
  readonly queues: SqsQueues | undefined;
}

/** SQS FIFO queues drop a repeated deduplication id for 5 minutes. */
export const FIFO_DEDUPE_WINDOW_MS = 5 * 60_000;

/**
 * One SQS queue as a `Transport`. FIFO (default): `MessageDeduplicationId` = sha-256 of the dedupe
 * key (5-minute broker dedupe), `MessageGroupId` = the envelope key (order per key). Standard
 * queues: no broker dedupe, no order; the worker's processed-guard keeps effects once. Locks are
 * visibility timeouts, extended and used for delayed retries with `ChangeMessageVisibility`;
 * `attempt` is `ApproximateReceiveCount`; acks are batched deletes. `start()` sets up the queues
 * (see `ensureSqsQueues`; `publish`, `consume` and the dead-letter API start it
 * on first use); `close()` drains subscriptions and destroys a client it made.
 *
 * @example
 * const transport = createSqsTransport({ queue: 'orders', clientConfig: { region: 'eu-west-1' } });
 * await transport.start();
 * await transport.publish([{ envelope }]);
 */
export function createSqsTransport(options: SqsTransportOptions): SqsTransport {
  const config = parseSqsOptions(options);
  let client: SQSClient | undefined = config.client;
  let queues: SqsQueues | undefined;
  const subscriptions = createSubscriptions();

  const capabilities: TransportCapabilities = {
    brokerDedupe: config.fifo ? { windowMs: FIFO_DEDUPE_WINDOW_MS } : false,
    orderingPerKey: config.fifo,
    lock: { scope: 'message', maxMs: MAX_VISIBILITY_MS },
    maxDelayMs: MAX_DELAY_MS,
    maxMessageBytes: config.maxMessageBytes,
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
        maxReceiveCount: config.maxReceiveCount,
        create: config.createQueues,
      });
      queues = q;
      return { client: c, queues: q, deletes: createDeleteBatcher(c, q.url) };
    },
    close: async () => {
      await subscriptions.closeAll();
      if (config.client === undefined) client?.destroy();
    },
  });
  /** The started client and queues (starting first if needed). */
  const ready = (op: string) => lifecycle.start(op);

  return {
    name: 'sqs',
    capabilities,
    get queues() {
      return queues;
    },
    deadLetters: createDeadLetters({
      target: async () => {
        const { client: c, queues: q } = await ready('deadLetters');
        return { client: c, url: q.url, deadLetterUrl: q.deadLetterUrl };
      },
      fifo: config.fifo,
      maxReceiveCount: config.maxReceiveCount,
      scanSeconds: config.deadLetterScanSeconds,
      logger: config.logger,
    }),

    start: async () => void (await lifecycle.start()),

    async publish(messages) {
      if (messages.length === 0) return;
      const outgoing = messages.map((m) => toOutgoing(m, config.maxMessageBytes));
      const { client: c, queues: q } = await ready('publish');
      await sendAll({ client: c, url: q.url, fifo: config.fifo }, outgoing);
    },

    async consume(handler, consumeOptions) {
      const { client: c, queues: q, deletes: d } = await ready('consume');
      const { concurrency, lockMs } = parseConsumeOptions(consumeOptions, capabilities);
      const consumer = startConsumer({
        client: c,
        url: q.url,
        deadLetterUrl: q.deadLetterUrl,
        fifo: config.fifo,
        deletes: d,
        handler,
        concurrency,
        lockMs,
        waitTimeSeconds: config.waitTimeSeconds,
        logger: config.logger,
      });
      return subscriptions.track(() => consumer.close());
    },

    close: () => lifecycle.close(),
  };
}
