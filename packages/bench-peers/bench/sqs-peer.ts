/**
 * message-queue-toolkit's SQS publisher and consumer for one standard queue, written the way its
 * README and its own tests do it (a subclass per queue, a zod schema per message type). Used by
 * the SQS peer bench only.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { MessageHandlerConfigBuilder } from '@message-queue-toolkit/core';
import {
  AbstractSqsConsumer,
  AbstractSqsPublisher,
  type SQSConsumerDependencies,
  type SQSConsumerOptions,
} from '@message-queue-toolkit/sqs';
import { BENCH_MESSAGE, type BenchMessage } from './peer-message.js';

export type SqsPeerDependencies = SQSConsumerDependencies & { sqsClient: SQSClient };

class BenchSqsPublisher extends AbstractSqsPublisher<BenchMessage> {}

export function createSqsPeerPublisher(deps: SqsPeerDependencies, queueName: string) {
  return new BenchSqsPublisher(deps, {
    creationConfig: { queue: { QueueName: queueName } },
    messageSchemas: [BENCH_MESSAGE],
    messageTypeResolver: { messageTypePath: 'type' },
  });
}

class BenchSqsConsumer extends AbstractSqsConsumer<BenchMessage, undefined> {
  // The peer's constructor is protected: a subclass per queue is how it is meant to be used.
  constructor(
    deps: SQSConsumerDependencies,
    options: SQSConsumerOptions<BenchMessage, undefined, undefined>,
  ) {
    super(deps, options, undefined);
  }
}

/**
 * A consumer whose handler calls `onMessage` and succeeds (the peer then deletes the message).
 * `tuned`: ten messages per receive and `consumers` pollers; otherwise the peer's defaults.
 */
export function createSqsPeerConsumer(
  deps: SqsPeerDependencies,
  queueName: string,
  onMessage: () => void,
  tuned?: { readonly consumers: number },
) {
  return new BenchSqsConsumer(deps, {
    creationConfig: { queue: { QueueName: queueName } },
    messageTypeResolver: { messageTypePath: 'type' },
    ...(tuned
      ? {
          consumerOverrides: { batchSize: 10, waitTimeSeconds: 1 },
          concurrentConsumersAmount: tuned.consumers,
        }
      : { consumerOverrides: { waitTimeSeconds: 1 } }),
    handlers: new MessageHandlerConfigBuilder<BenchMessage, undefined>()
      .addConfig(BENCH_MESSAGE, async () => {
        onMessage();
        return { result: 'success' };
      })
      .build(),
  });
}
