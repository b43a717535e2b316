import { createBullmqTransport } from '@onceflow/adapter-bullmq';
import type { Inbox, InboxOutcomes, Transport } from '@onceflow/core';
import { createEmbedded } from '@onceflow/embedded';
import { createRedisInbox } from '@onceflow/inbox-redis';
import { Redis } from 'ioredis';
import type { MixedSpec } from './spec.js';

/** The receiver's side of a mixed shape: its inbox and the broker, as each process opens them. */
export interface ReceiverSide {
  readonly inbox: Inbox & InboxOutcomes;
  readonly transport: Transport;
  close(): Promise<void>;
}

export async function openReceiverSide(spec: MixedSpec): Promise<ReceiverSide> {
  if (spec.shape === 'embedded') {
    const embedded = createEmbedded({ path: spec.file });
    await embedded.start();
    const transport = embedded.transport(spec.queue, { lockMs: spec.lockMs, pollIntervalMs: 20 });
    return { inbox: embedded.inbox, transport, close: () => embedded.close() };
  }
  const redis = new Redis(spec.redisUrl);
  const transport = createBullmqTransport({
    url: spec.redisUrl,
    queue: spec.queue,
    prefix: spec.queue,
    lockMs: spec.lockMs,
    dedupeWindowMs: 60_000,
  });
  return {
    inbox: createRedisInbox({ redis, prefix: spec.inboxPrefix }),
    transport,
    async close() {
      await transport.close();
      await redis.quit();
    },
  };
}
