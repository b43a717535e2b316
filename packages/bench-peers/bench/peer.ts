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
import { BENCH_EVENT_TYPE } from '@onceflow/conformance/bench';
import type { Envelope } from '@onceflow/core';
import { z } from 'zod';

export type PeerDependencies = AMQPConsumerDependencies;

const BENCH_MESSAGE = z.object({
  id: z.string(),
  type: z.literal(BENCH_EVENT_TYPE),
  timestamp: z.string(),
  payload: z.unknown(),
});
type BenchMessage = z.infer<typeof BENCH_MESSAGE>;

/** The bench envelope as the peer's message: its id, type and timestamp fields, the same payload. */
export function peerMessage(e: Envelope): BenchMessage {
  return { id: e.id, type: BENCH_EVENT_TYPE, timestamp: e.receivedAt, payload: e.payload };
}

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
