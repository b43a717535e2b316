import { createBackoff, createInFlight } from '@onceflow/core/kit';
import { type Logger, LockLostError, type Subscription } from '@onceflow/core';
import type { Channel, Message } from 'amqplib';
import { type AckBatcher, createAckBatcher } from './acks.js';
import type { ConsumerChannel } from './delivery.js';
import type { Link } from './link.js';
import { type ChannelSignals, createChannelSignals } from './signals.js';

export interface ConsumerDeps {
  readonly link: Link;
  /** The queue consumed: the work queue or the dead-letter queue. */
  readonly queue: string;
  /** Handles one message and settles it through `on.acks` (see `receiveWork`). */
  readonly receive: (on: ConsumerChannel, msg: Message) => Promise<void>;
  readonly concurrency: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  readonly logger: Logger;
}

interface Attached {
  readonly channel: Channel;
  readonly acks: AckBatcher;
  /** Aborted when the channel is lost. */
  readonly controller: AbortController;
  /** The signals of its deliveries in flight. */
  readonly signals: ChannelSignals;
  consumerTag?: string;
}

/**
 * One consumer of a queue on a channel of its own, with prefetch = `concurrency`, so the
 * broker never hands it more unsettled deliveries than handlers may run. When the channel or the
 * connection is lost (broker restart, consumer timeout, network), the deliveries it held return
 * to the queue on the broker's side and their `signal`s abort here; the consumer re-attaches with
 * backoff once the connection is back.
 *
 * `close()` cancels the consumer, waits for every in-flight handler and its settlement (an
 * unsettled one is retried at once by `runDelivery`), then closes the channel. Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { logger, queue } = deps;
  const inFlight = createInFlight(deps.concurrency);
  const backlog: [Attached, Message][] = [];
  let current: Attached | undefined;
  let closing = false;
  let timer: NodeJS.Timeout | undefined;
  const backoff = createBackoff({
    baseDelayMs: deps.reconnectMinMs,
    maxDelayMs: deps.reconnectMaxMs,
  });

  const deliver = async (on: Attached, msg: Message) => {
    const held = on.signals.take();
    try {
      await deps.receive({ acks: on.acks, signal: held.signal }, msg);
    } finally {
      on.signals.release(held);
    }
  };

  /** Starts a delivery in a free slot; `pump` runs once it is settled (`.then`: no `finally` chain). */
  const start = (on: Attached, msg: Message) => {
    if (on.controller.signal.aborted) return; // returned to the queue with its channel
    void inFlight.run(() => deliver(on, msg)).then(pump, pumpAndRethrow);
  };

  const pump = () => {
    while (inFlight.hasRoom && backlog.length > 0) {
      const [on, msg] = backlog.shift() as [Attached, Message];
      start(on, msg);
    }
  };

  const pumpAndRethrow = (err: unknown) => {
    pump();
    throw err;
  };

  const lost = (on: Attached, why: string) => {
    if (on.controller.signal.aborted) return;
    const reason = new LockLostError(
      `consumer of ${queue}: ${why}; its deliveries return to the queue`,
    );
    on.controller.abort(reason);
    on.signals.abort(reason);
    if (current === on) current = undefined;
    if (!closing) {
      logger.warn({ queue, why }, 'rabbitmq consumer lost; re-attaching');
      schedule();
    }
  };

  const attach = async (): Promise<void> => {
    const conn = await deps.link.connection();
    const channel: Channel = await conn.createChannel();
    const controller = new AbortController();
    const on: Attached = {
      channel,
      acks: createAckBatcher(channel),
      controller,
      signals: createChannelSignals(),
    };
    channel.on('error', (err: unknown) =>
      logger.warn({ err, queue }, 'rabbitmq consumer channel error'),
    );
    channel.on('close', () => lost(on, 'channel closed'));
    try {
      await channel.prefetch(deps.concurrency, false);
      const { consumerTag } = await channel.consume(queue, (msg) => {
        if (msg === null) return void channel.close().catch(() => {}); // cancelled by the broker
        on.acks.received(msg);
        if (backlog.length === 0 && inFlight.hasRoom) return start(on, msg);
        backlog.push([on, msg]);
        pump();
      });
      on.consumerTag = consumerTag;
    } catch (err) {
      await channel.close().catch(() => {});
      throw err;
    }
    if (closing) {
      await channel.close().catch(() => {});
      return;
    }
    current = on;
    backoff.reset();
  };

  const schedule = () => {
    if (closing || timer || current) return;
    timer = setTimeout(() => {
      timer = undefined;
      attach().catch((err: unknown) => {
        logger.warn({ err, queue }, 'rabbitmq consumer: re-attach failed');
        schedule();
      });
    }, backoff.next());
  };

  await attach();
  const unsubscribe = deps.link.onConnect(() => {
    if (current || closing) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    backoff.reset();
    schedule();
  });

  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        closing = true;
        unsubscribe();
        if (timer) clearTimeout(timer);
        const on = current;
        if (on?.consumerTag) await on.channel.cancel(on.consumerTag).catch(() => {});
        await inFlight.idle();
        while (backlog.length > 0) {
          pump();
          await inFlight.idle();
        }
        current = undefined;
        if (on && !on.controller.signal.aborted) on.acks.flush();
        await on?.channel.close().catch(() => {});
      })();
      return closed;
    },
  };
}
