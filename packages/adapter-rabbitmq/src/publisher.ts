import { TransportUnavailableError } from '@onceflow/core';
import { brokerCall } from '@onceflow/core/kit';
import type { ConfirmChannel, Message, Options } from 'amqplib';
import type { Link } from './link.js';

/** One message for the default exchange, routed to `queue`. `options.messageId` is required. */
export interface OutgoingAmqp {
  readonly queue: string;
  readonly body: Buffer;
  readonly options: Options.Publish & { readonly messageId: string };
}

/**
 * Publishes on one confirm channel with confirms pipelined: up to `maxUnconfirmed` messages await
 * the broker's ack at once, never send-wait-send. Every message is `mandatory`, so one the broker
 * cannot route (its queue was deleted) is an error, not a silent drop. `send` resolves once the
 * broker confirmed every message of the call and rejects with `TransportUnavailableError` if any
 * was nacked, returned, or its channel or connection closed first (some may then be stored).
 * Safe to call concurrently; the channel is reopened on the next call after it was lost.
 */
export interface Publisher {
  send(messages: readonly OutgoingAmqp[]): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  readonly messageId: string;
  returned: boolean;
}

export function createPublisher(link: Link, maxUnconfirmed: number): Publisher {
  let channel: Promise<ConfirmChannel> | undefined;
  /** The open channel, once `channel` resolved; undefined while (re)opening or after a loss. */
  let current: ConfirmChannel | undefined;
  let unconfirmed = 0;
  let waiters: (() => void)[] = [];
  const byMessageId = new Map<string, Set<Pending>>();

  const wake = () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };

  const onReturn = (msg: Message) => {
    const id = msg.properties.messageId as string | undefined;
    for (const p of (id && byMessageId.get(id)) || []) p.returned = true;
  };

  const open = (): Promise<ConfirmChannel> => {
    channel ??= brokerCall('rabbitmq open a publish channel', async () => {
      const conn = await link.connection();
      const ch = await conn.createConfirmChannel();
      ch.on('error', () => {}); // the close that follows is what matters
      ch.on('return', onReturn);
      ch.on('close', () => {
        channel = undefined;
        if (current === ch) current = undefined;
        wake();
      });
      current = ch;
      return ch;
    }).catch((err: unknown) => {
      channel = undefined;
      throw err;
    });
    return channel;
  };

  /** The window, not amqplib's write buffer, bounds what is buffered: at most `maxUnconfirmed` messages. */
  const publishOne = (ch: ConfirmChannel, m: OutgoingAmqp): Promise<void> => {
    const pending: Pending = { messageId: m.options.messageId, returned: false };
    let set = byMessageId.get(pending.messageId);
    if (!set) {
      set = new Set();
      byMessageId.set(pending.messageId, set);
    }
    set.add(pending);
    unconfirmed++;
    const confirmed = new Promise<void>((resolve, reject) => {
      const done = (err: unknown) => {
        unconfirmed--;
        set.delete(pending);
        if (set.size === 0) byMessageId.delete(pending.messageId);
        wake();
        if (err) reject(err);
        else if (pending.returned) {
          reject(
            new TransportUnavailableError(
              `rabbitmq: message ${pending.messageId} is unroutable: queue ${m.queue} does not exist`,
            ),
          );
        } else resolve();
      };
      try {
        ch.publish('', m.queue, m.body, { ...m.options, mandatory: true }, done);
      } catch (err) {
        done(err);
      }
    });
    return brokerCall(`rabbitmq publish to ${m.queue}`, () => confirmed);
  };

  return {
    async send(messages) {
      const confirms: Promise<void>[] = [];
      try {
        let ch = await open();
        for (const m of messages) {
          if (unconfirmed >= maxUnconfirmed || current !== ch) {
            while (unconfirmed >= maxUnconfirmed)
              await new Promise<void>((resolve) => waiters.push(resolve));
            ch = await open();
          }
          const confirmed = publishOne(ch, m);
          confirmed.catch(() => {}); // awaited below
          confirms.push(confirmed);
        }
      } catch (err) {
        await Promise.allSettled(confirms);
        throw err;
      }
      const results = await Promise.allSettled(confirms);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    async close() {
      const ch = await channel?.catch(() => undefined);
      channel = undefined;
      await ch?.close().catch(() => {});
    },
  };
}
