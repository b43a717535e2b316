import { TransportUnavailableError } from '@onceflow/core';
import { brokerCall, brokerError } from '@onceflow/core/kit';
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
 * `toAmqp` makes each message just before the window lets it go, so a long call starts sending
 * at once. Safe to call concurrently; the channel is reopened on the next call after it was lost.
 */
export interface Publisher {
  send<T>(items: readonly T[], toAmqp: (item: T) => OutgoingAmqp): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  readonly messageId: string;
  returned: boolean;
}

/** The confirms one `send` waits for: how many are outstanding, the first failure, who waits. */
interface Confirms {
  outstanding: number;
  failure: { readonly err: unknown } | undefined;
  finish: (() => void) | undefined;
}

export function createPublisher(link: Link, maxUnconfirmed: number): Publisher {
  let channel: Promise<ConfirmChannel> | undefined;
  /** The open channel, once `channel` resolved; undefined while (re)opening or after a loss. */
  let current: ConfirmChannel | undefined;
  let unconfirmed = 0;
  let waiters: (() => void)[] = [];
  /** Messages awaiting their confirm by message id (a re-publish may share one), for `basic.return`. */
  const byMessageId = new Map<string, Pending[]>();

  const wake = () => {
    if (waiters.length === 0) return;
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

  const track = (pending: Pending) => {
    const same = byMessageId.get(pending.messageId);
    if (same) same.push(pending);
    else byMessageId.set(pending.messageId, [pending]);
  };
  const untrack = (pending: Pending) => {
    const same = byMessageId.get(pending.messageId);
    if (!same || same.length === 1) byMessageId.delete(pending.messageId);
    else same.splice(same.indexOf(pending), 1);
  };

  const answer = (confirms: Confirms, err: unknown) => {
    if (err !== undefined) confirms.failure ??= { err };
    if (--confirms.outstanding === 0) confirms.finish?.();
  };

  /** The window, not amqplib's write buffer, bounds what is buffered: at most `maxUnconfirmed` messages. */
  const publishOne = (ch: ConfirmChannel, m: OutgoingAmqp, confirms: Confirms): void => {
    const pending: Pending = { messageId: m.options.messageId, returned: false };
    track(pending);
    unconfirmed++;
    confirms.outstanding++;
    let answered = false;
    // amqplib may call back after `publish` threw (the channel closed): one answer per message.
    const done = (err: unknown) => {
      if (answered) return;
      answered = true;
      unconfirmed--;
      untrack(pending);
      wake();
      if (err) answer(confirms, brokerError(`rabbitmq publish to ${m.queue}`, err));
      else if (pending.returned) {
        const why = `rabbitmq: message ${pending.messageId} is unroutable: queue ${m.queue} does not exist`;
        answer(confirms, new TransportUnavailableError(why));
      } else answer(confirms, undefined);
    };
    try {
      ch.publish('', m.queue, m.body, { ...m.options, mandatory: true }, done);
    } catch (err) {
      done(err);
    }
  };

  return {
    async send(items, toAmqp) {
      const confirms: Confirms = { outstanding: 0, failure: undefined, finish: undefined };
      try {
        let ch = current ?? (await open());
        for (const item of items) {
          if (unconfirmed >= maxUnconfirmed || current !== ch) {
            while (unconfirmed >= maxUnconfirmed)
              await new Promise<void>((resolve) => waiters.push(resolve));
            ch = await open();
          }
          publishOne(ch, toAmqp(item), confirms);
        }
      } catch (err) {
        confirms.failure = { err };
      }
      if (confirms.outstanding > 0)
        await new Promise<void>((resolve) => {
          confirms.finish = resolve;
        });
      if (confirms.failure) throw confirms.failure.err;
    },
    async close() {
      const ch = await channel?.catch(() => undefined);
      channel = undefined;
      await ch?.close().catch(() => {});
    },
  };
}
