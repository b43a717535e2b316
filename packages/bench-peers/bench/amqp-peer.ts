/**
 * message-queue-toolkit's AMQP publisher and consumer for one queue, written the way its README
 * and its own tests do it (a subclass per queue, a zod schema per message type). Used by the peer
 * bench only.
 */
import {
  AbstractAmqpQueueConsumer,
  AbstractAmqpQueuePublisher,
  type AMQPConsumerDependencies,
} from '@message-queue-toolkit/amqp';
import { MessageHandlerConfigBuilder } from '@message-queue-toolkit/core';
import { BENCH_MESSAGE, type BenchMessage } from './peer-message.js';

export type PeerDependencies = AMQPConsumerDependencies;

const creation = (queueName: string, args: Record<string, string>) => ({
  queueName,
  queueOptions: { durable: true, autoDelete: false, arguments: args },
});

class BenchPublisher extends AbstractAmqpQueuePublisher<BenchMessage> {}

export function createPeerPublisher(
  deps: PeerDependencies,
  queueName: string,
  args: Record<string, string>,
): BenchPublisher {
  return new BenchPublisher(deps, {
    creationConfig: creation(queueName, args),
    messageSchemas: [BENCH_MESSAGE],
    messageTypeResolver: { messageTypePath: 'type' },
  });
}

class BenchConsumer extends AbstractAmqpQueueConsumer<BenchMessage, undefined> {}

/** A consumer whose handler calls `onMessage` and succeeds (the peer then acks). */
export function createPeerConsumer(
  deps: PeerDependencies,
  queueName: string,
  args: Record<string, string>,
  onMessage: () => void,
): BenchConsumer {
  return new BenchConsumer(
    deps,
    {
      creationConfig: creation(queueName, args),
      messageTypeResolver: { messageTypePath: 'type' },
      handlers: new MessageHandlerConfigBuilder<BenchMessage, undefined>()
        .addConfig(BENCH_MESSAGE, async () => {
          onMessage();
          return { result: 'success' };
        })
        .build(),
    },
    undefined,
  );
}
