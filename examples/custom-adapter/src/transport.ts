import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ConsumeOptions,
  Delivery,
  TopologySetup,
  Transport,
  TransportCapabilities,
} from '@onceflow/core';
import {
  type DeliveryInit,
  brokerCall,
  checkRetryDelay,
  createInFlight,
  createLifecycle,
  createSubscriptions,
  decodeDelivery,
  dedupeKeyOf,
  encodeWithinLimit,
  parseConsumeOptions,
  runDelivery,
  watchLock,
} from '@onceflow/core/kit';
import { type QClient, type QMessage, Q_LIMITS, isReceiptGone } from './fake-client.js';

export interface QTransportConfig {
  /** Shared by every transport on the broker; `close()` leaves it open. */
  readonly client: QClient;
  readonly queue: string;
  /** Each delivery's visibility timeout, in ms; `renewLock` renews it for as long. Default 30 000. */
  readonly lockMs?: number | undefined;
}

/** How long one receive waits for a message; `close()` ends the wait at once. */
const LONG_POLL_MS = 10_000;

/** One broker call, its errors as the contract's: `TransportUnavailableError`, `LockLostError`. */
const call = <T>(what: string, run: () => Promise<T>) =>
  brokerCall(`q ${what}`, run, { lockLost: isReceiptGone });

/**
 * One queue of the `q` broker as a `Transport`. Locks are visibility timeouts of `lockMs`,
 * renewable; `attempt` is the broker's receive count; broker dedupe drops a repeated dedupe key
 * for 5 minutes. The queue is created on first use (`start()` does it eagerly); `close()` drains
 * every subscription and leaves the client open. Dead letters are not the transport's: the
 * worker keeps them in the event record.
 *
 * @example
 * const transport = createQTransport({ client, queue: 'orders' });
 * await transport.publish([{ envelope }]);
 */
export function createQTransport(config: QTransportConfig): Transport & TopologySetup {
  const { client, queue } = config;
  const lockMs = config.lockMs ?? 30_000;
  const capabilities: TransportCapabilities = {
    brokerDedupe: { windowMs: Q_LIMITS.dedupeWindowMs },
    orderingPerKey: false,
    lock: { scope: 'message', ms: lockMs },
    maxDelayMs: Q_LIMITS.maxVisibilityMs,
    maxMessageBytes: Q_LIMITS.maxBodyBytes,
    deliveryLimit: false, // the q broker has no redrive policy: it never gives up on a message
    durability: 'in process memory only: lost when the process exits (a fake broker)',
  };
  const subscriptions = createSubscriptions();
  const lifecycle = createLifecycle({
    name: `q transport ${queue}`,
    start: () => call('createQueue', () => client.createQueue(queue)),
    close: () => subscriptions.closeAll(),
  });

  /** The broker side of one received message, for `runDelivery`. */
  const received = (m: QMessage): DeliveryInit & { dispose(): void } => {
    // Aborts `signal` when the visibility timeout runs out, or a call finds the receipt gone.
    const lock = watchLock({ until: m.lockedUntil, describe: `visibility of ${queue}/${m.id}` });
    /** A call that needs the lock: a refused receipt handle means the lock is lost. */
    const holding = <T>(op: string, run: () => Promise<T>) =>
      call(op, () =>
        run().catch((err: unknown) => {
          if (isReceiptGone(err)) lock.lost(`${op} found the receipt handle gone`);
          throw err;
        }),
      );
    return {
      envelope: decodeDelivery(m.body), // not an envelope: reaches the worker as undecodable
      attempt: m.receiveCount,
      signal: lock.signal,
      ack: () => holding('ack', () => client.delete(queue, m.receiptHandle)),
      async retry({ delayMs }) {
        checkRetryDelay(delayMs, capabilities.maxDelayMs); // a RangeError past the declared maximum
        await holding('retry', () => client.changeVisibility(queue, m.receiptHandle, delayMs));
      },
      async renewLock() {
        const until = await holding('renewLock', () =>
          client.changeVisibility(queue, m.receiptHandle, lockMs),
        );
        lock.renew(until);
      },
      dispose: lock.dispose,
    };
  };

  /** Receives while there is room; `close()` stops receiving and waits for the handlers. */
  const startConsumer = (handler: (d: Delivery) => Promise<void>, options: ConsumeOptions) => {
    const { concurrency } = parseConsumeOptions(options);
    const inFlight = createInFlight(concurrency);
    const stop = new AbortController();
    const deliver = async (m: QMessage) => {
      const init = received(m);
      try {
        await runDelivery(handler, init); // never rejects
      } finally {
        init.dispose();
      }
    };
    const loop = (async () => {
      while (!stop.signal.aborted) {
        await inFlight.whenRoom();
        try {
          const messages = await client.receive(queue, {
            max: inFlight.limit - inFlight.size,
            visibilityMs: lockMs,
            waitMs: LONG_POLL_MS,
            signal: stop.signal,
          });
          for (const m of messages) void inFlight.run(() => deliver(m));
        } catch {
          // The broker is away: try again in a second.
          await sleep(1000, undefined, { signal: stop.signal }).catch(() => {});
        }
      }
    })();
    return async () => {
      stop.abort();
      await loop;
      await inFlight.idle();
    };
  };

  return {
    name: 'q',
    capabilities,
    start: () => lifecycle.start(),
    async publish(messages) {
      await lifecycle.start('publish');
      const entries = messages.map((m) => ({
        body: encodeWithinLimit(m.envelope, capabilities.maxMessageBytes),
        dedupeId: dedupeKeyOf(m),
      }));
      await call('send', () => client.send(queue, entries));
    },
    async consume(handler, options) {
      await lifecycle.start('consume');
      return subscriptions.track(startConsumer(handler, options));
    },
    close: () => lifecycle.close(),
  };
}
