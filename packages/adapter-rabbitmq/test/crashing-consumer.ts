import amqp from 'amqplib';
import { afterAll, beforeAll } from 'vitest';
import { defaultAmqpUrl } from '../src/index.js';

/**
 * A connection of the test file's own (opened before its tests, closed after), to play a consumer
 * that crashes and to look at queues. Call once at a test file's top level.
 */
export function useTestConnection(): {
  readonly conn: () => amqp.ChannelModel;
  /** A consumer that takes one message of `queue` and dies (its channel closes) without settling it. */
  crashOnce(queue: string): Promise<void>;
} {
  let conn: amqp.ChannelModel | undefined;
  beforeAll(async () => {
    conn = await amqp.connect(defaultAmqpUrl());
  });
  afterAll(() => conn?.close());
  const open = () => {
    if (!conn) throw new Error('the test connection is opened in beforeAll');
    return conn;
  };
  return {
    conn: open,
    async crashOnce(queue) {
      const ch = await open().createChannel();
      await ch.prefetch(1);
      await new Promise<void>((resolve) => {
        void ch.consume(queue, (msg) => {
          if (msg) resolve();
        });
      });
      await ch.close();
    },
  };
}
