import type { Channel, Message } from 'amqplib';

/**
 * The acks of one consumer channel, coalesced: acks given in one turn of the event loop go out
 * at its end as one `ack(multiple)` frame for the settled run at the head, plus single acks for
 * settled deliveries behind a still-unsettled one (held back, they would take prefetch slots).
 * A multiple ack is only ever sent up to a tag below the oldest unsettled delivery, and only on
 * a tag the broker still holds (RabbitMQ closes the channel on an unknown tag), so it never acks
 * a delivery that was not settled. `ack` resolves once its frame is written to the channel.
 */
export interface AckBatcher {
  /** Registers a delivery, in the order the channel received them. */
  received(msg: Message): void;
  /** Acks `msg` at the end of this turn; resolves once written, rejects if the channel failed. */
  ack(msg: Message): Promise<void>;
  /** Writes every pending ack now (before the channel is closed or cancelled). */
  flush(): void;
}

/** Outstanding tags: `false` while the delivery is unsettled, `true` once acked, not yet written. */
type Outstanding = Map<number, boolean>;

export function createAckBatcher(channel: Channel): AckBatcher {
  // A Map iterates in insertion order, and tags arrive ascending: its first key is the oldest.
  const outstanding: Outstanding = new Map();
  let pending:
    | { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void }
    | undefined;
  let scheduled: NodeJS.Immediate | undefined;

  const write = () => {
    let head: number | undefined; // highest tag of the settled run at the head
    for (const [tag, settled] of outstanding) {
      if (!settled) break;
      head = tag;
      outstanding.delete(tag);
    }
    if (head !== undefined) channel.ack({ fields: { deliveryTag: head } } as Message, true);
    for (const [tag, settled] of outstanding) {
      if (!settled) continue;
      outstanding.delete(tag);
      channel.ack({ fields: { deliveryTag: tag } } as Message, false);
    }
  };

  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    const batch = pending;
    pending = undefined;
    if (!batch) return;
    try {
      write();
      batch.resolve();
    } catch (err) {
      outstanding.clear(); // the channel is gone; its deliveries return to the queue
      batch.reject(err);
    }
  };

  return {
    received(msg) {
      outstanding.set(msg.fields.deliveryTag, false);
    },
    ack(msg) {
      outstanding.set(msg.fields.deliveryTag, true);
      if (!pending) {
        let resolve!: () => void;
        let reject!: (e: unknown) => void;
        const promise = new Promise<void>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        pending = { promise, resolve, reject };
        scheduled = setImmediate(flush);
      }
      return pending.promise;
    },
    flush,
  };
}
