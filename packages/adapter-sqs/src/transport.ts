import { SQSClient } from '@aws-sdk/client-sqs';
import { parseConsumeOptions, createSubscriptions } from '@onceflow/core/kit';
import {
  type Transport,
  type TransportCapabilities,
  TransportUnavailableError,
} from '@onceflow/core';
import { parseSqsOptions, type SqsTransportOptions } from './config.js';
import { startConsumer } from './consumer.js';
import { createDeadLetters } from './dead-letters.js';
import { createDeleteBatcher, type DeleteBatcher } from './delete-batcher.js';
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
  let deletes: DeleteBatcher | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
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

  let starting: Promise<void> | undefined;

  /** Sets up the queues once; a failed set-up is tried again by the next call. */
  const start = (op: string): Promise<void> => {
    if (closed)
      return Promise.reject(
        new TransportUnavailableError(`sqs transport ${config.queue}: ${op} after close`),
      );
    starting ??= (async () => {
      client ??= new SQSClient(config.clientConfig ?? {});
      queues = await ensureSqsQueues(client, {
        queue: config.queue,
        fifo: config.fifo,
        maxReceiveCount: config.maxReceiveCount,
        create: config.createQueues,
      });
      deletes = createDeleteBatcher(client, queues.url);
    })().catch((err: unknown) => {
      starting = undefined;
      throw err;
    });
    return starting;
  };
  /** The started client and queues (starting first if needed). */
  const ready = async (op: string) => {
    await start(op);
    if (!client || !queues || !deletes) throw new Error('unreachable: started without queues');
    return { client, queues, deletes };
  };

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

    start: () => start('start'),

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

    close() {
      closed = true;
      closing ??= (async () => {
        await subscriptions.closeAll();
        if (config.client === undefined) client?.destroy();
      })();
      return closing;
    },
  };
}
