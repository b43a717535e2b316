import {
  createInFlight,
  type Delivery,
  type Logger,
  LockLostError,
  runDelivery,
  type Subscription,
} from '@onceflow/core';
import type { Channel, Message } from 'amqplib';
import { type ConsumerChannel, type DeliveryDeps, brokerDelivery } from './delivery.js';
import type { Link } from './link.js';
import { fromWorkMessage } from './marshal.js';

export interface ConsumerDeps extends DeliveryDeps {
  readonly link: Link;
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  readonly logger: Logger;
}

interface Attached {
  readonly channel: Channel;
  /** Aborted when the channel is lost. */
  readonly controller: AbortController;
  /** One per delivery in flight (a shared signal would collect every handler's listeners). */
  readonly held: Set<AbortController>;
  consumerTag?: string;
}

/**
 * One consumer of the work queue on a channel of its own, with prefetch = `concurrency`, so the
 * broker never hands it more unsettled deliveries than handlers may run. When the channel or the
 * connection is lost (broker restart, consumer timeout, network), the deliveries it held return
 * to the queue on the broker's side and their `signal`s abort here; the consumer re-attaches with
 * backoff once the connection is back.
 *
 * `close()` cancels the consumer, waits for every in-flight handler and its settlement (an
 * unsettled one is retried at once by `runDelivery`), then closes the channel. Idempotent.
 */
export async function startConsumer(deps: ConsumerDeps): Promise<Subscription> {
  const { logger, names } = deps;
  const inFlight = createInFlight(deps.concurrency);
  const backlog: [Attached, Message][] = [];
  let current: Attached | undefined;
  let closing = false;
  let timer: NodeJS.Timeout | undefined;
  let delay = deps.reconnectMinMs;

  const deliver = async (on: Attached, msg: Message) => {
    let work: ReturnType<typeof fromWorkMessage>;
    try {
      work = fromWorkMessage(msg);
    } catch (err) {
      logger.error({ err, queue: names.work }, 'undecodable message: dead-lettered by the broker');
      if (!on.controller.signal.aborted) on.channel.nack(msg, false, false);
      return;
    }
    const lock = new AbortController();
    on.held.add(lock);
    const consumer: ConsumerChannel = { channel: on.channel, signal: lock.signal };
    try {
      await runDelivery(deps.handler, brokerDelivery(deps, consumer, msg, work), {
        onError: (err) =>
          logger.warn({ err, queue: names.work, id: work.envelope.id }, 'settlement not recorded'),
      });
    } finally {
      on.held.delete(lock);
    }
  };

  const pump = () => {
    while (inFlight.hasRoom && backlog.length > 0) {
      const [on, msg] = backlog.shift() as [Attached, Message];
      if (on.controller.signal.aborted) continue; // returned to the queue with its channel
      void inFlight.run(() => deliver(on, msg)).finally(pump);
    }
  };

  const lost = (on: Attached, why: string) => {
    if (on.controller.signal.aborted) return;
    const reason = new LockLostError(
      `consumer of ${names.work}: ${why}; its deliveries return to the queue`,
    );
    on.controller.abort(reason);
    for (const lock of on.held) lock.abort(reason);
    if (current === on) current = undefined;
    if (!closing) {
      logger.warn({ queue: names.work, why }, 'rabbitmq consumer lost; re-attaching');
      schedule();
    }
  };

  const attach = async (): Promise<void> => {
    const conn = await deps.link.connection();
    const channel: Channel = await conn.createChannel();
    const controller = new AbortController();
    const on: Attached = { channel, controller, held: new Set() };
    channel.on('error', (err: unknown) =>
      logger.warn({ err, queue: names.work }, 'rabbitmq consumer channel error'),
    );
    channel.on('close', () => lost(on, 'channel closed'));
    try {
      await channel.prefetch(deps.concurrency, false);
      const { consumerTag } = await channel.consume(names.work, (msg) => {
        if (msg === null) return void channel.close().catch(() => {}); // cancelled by the broker
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
    delay = deps.reconnectMinMs;
  };

  const schedule = () => {
    if (closing || timer || current) return;
    timer = setTimeout(() => {
      timer = undefined;
      attach().catch((err: unknown) => {
        logger.warn({ err, queue: names.work }, 'rabbitmq consumer: re-attach failed');
        schedule();
      });
    }, delay);
    delay = Math.min(delay * 2, deps.reconnectMaxMs);
  };

  await attach();
  const unsubscribe = deps.link.onConnect(() => {
    if (current || closing) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    delay = deps.reconnectMinMs;
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
        await on?.channel.close().catch(() => {});
      })();
      return closed;
    },
  };
}
