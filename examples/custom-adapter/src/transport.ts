import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ConsumeOptions,
  type DeadLetter,
  type DeadLetters,
  type Delivery,
  type Transport,
  type TransportCapabilities,
  TransportUnavailableError,
  errorInfo,
} from '@onceflow/core';
import {
  type DeliveryInit,
  brokerCall,
  createInFlight,
  createSubscriptions,
  deadLetterHeaders,
  decodeEnvelope,
  dedupeKeyOf,
  encodeWithinLimit,
  parseConsumeOptions,
  readDeadLetterHeaders,
  runDelivery,
  watchLock,
} from '@onceflow/core/kit';
import {
  type QClient,
  type QDeadLetter,
  type QMessage,
  Q_LIMITS,
  isReceiptGone,
} from './fake-client.js';

export interface QTransportConfig {
  /** Shared by every transport on the broker; `close()` leaves it open. */
  readonly client: QClient;
  readonly queue: string;
}

/** How long one receive waits for a message; `close()` ends the wait at once. */
const LONG_POLL_MS = 10_000;

/** One broker call, its errors as the contract's: `TransportUnavailableError`, `LockLostError`. */
const call = <T>(what: string, run: () => Promise<T>) =>
  brokerCall(`q ${what}`, run, { lockLost: isReceiptGone });

/**
 * One queue of the `q` broker as a `Transport`. Locks are visibility timeouts; `attempt` is the
 * broker's receive count; broker dedupe drops a repeated dedupe key for 5 minutes. `start()`
 * creates the queue; `close()` drains every subscription and leaves the client open.
 *
 * @example
 * const transport = createQTransport({ client, queue: 'orders' });
 * await transport.start();
 * await transport.publish([{ envelope }]);
 */
export function createQTransport({ client, queue }: QTransportConfig): Transport {
  const capabilities: TransportCapabilities = {
    brokerDedupe: { windowMs: Q_LIMITS.dedupeWindowMs },
    orderingPerKey: false,
    lock: { scope: 'message', maxMs: Q_LIMITS.maxVisibilityMs },
    maxDelayMs: Q_LIMITS.maxVisibilityMs,
    maxMessageBytes: Q_LIMITS.maxBodyBytes,
    durability: 'in process memory only: lost when the process exits (a fake broker)',
  };
  const subscriptions = createSubscriptions();
  let closed = false;
  const assertOpen = (op: string) => {
    if (closed) throw new TransportUnavailableError(`q transport ${queue}: ${op} after close`);
  };

  /** The broker side of one received message, for `runDelivery`. */
  const received = (m: QMessage): Omit<DeliveryInit, 'envelope'> & { dispose(): void } => {
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
      attempt: m.receiveCount,
      signal: lock.signal,
      ack: () => holding('ack', () => client.delete(queue, m.receiptHandle)),
      async retry({ delayMs }) {
        await holding('retry', () => client.changeVisibility(queue, m.receiptHandle, delayMs));
      },
      deadLetter: ({ reason, error }) => {
        const fields = { reason, attempts: m.receiveCount, lastError: error };
        const headers = deadLetterHeaders({ ...fields, deadLetteredAt: new Date().toISOString() });
        return holding('deadLetter', () => client.deadLetter(queue, m.receiptHandle, headers));
      },
      async extendLock(ms) {
        lock.renew(
          await holding('extendLock', () => client.changeVisibility(queue, m.receiptHandle, ms)),
        );
      },
      dispose: lock.dispose,
    };
  };

  /** Receives while there is room; `close()` stops receiving and waits for the handlers. */
  const startConsumer = (handler: (d: Delivery) => Promise<void>, options: ConsumeOptions) => {
    const { concurrency, lockMs } = parseConsumeOptions(options, capabilities);
    const inFlight = createInFlight(concurrency);
    const stop = new AbortController();
    const deliver = async (m: QMessage) => {
      const init = received(m);
      try {
        const envelope = decodeEnvelope(m.body); // WireFormatError: not a message of ours
        await runDelivery(handler, { ...init, envelope }); // never rejects
      } catch (err) {
        // No handler can take it. It stays in the dead-letter queue, unlisted (or, should that
        // fail, comes back when its visibility runs out).
        const reason = { reason: 'wire format: not a v1 envelope', error: errorInfo(err) };
        await init.deadLetter(reason).catch(() => {});
      } finally {
        init.dispose();
      }
    };
    const loop = (async () => {
      while (!stop.signal.aborted) {
        await inFlight.whenRoom();
        const max = inFlight.limit - inFlight.size;
        try {
          const messages = await client.receive(queue, {
            max,
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
    deadLetters: qDeadLetters(client, queue),
    start: () => call('createQueue', () => client.createQueue(queue)),
    async publish(messages) {
      assertOpen('publish');
      const entries = messages.map((m) => ({
        body: encodeWithinLimit(m.envelope, capabilities.maxMessageBytes),
        dedupeId: dedupeKeyOf(m),
      }));
      await call('send', () => client.send(queue, entries));
    },
    async consume(handler, options) {
      assertOpen('consume');
      return subscriptions.track(startConsumer(handler, options));
    },
    async close() {
      closed = true;
      await subscriptions.closeAll();
    },
  };
}

/** The dead-letter API over the broker's dead-letter queue. */
function qDeadLetters(client: QClient, queue: string): DeadLetters {
  /** Bodies that are not envelopes are left out. */
  const read = (letters: readonly QDeadLetter[]): DeadLetter[] =>
    letters.flatMap((d) => {
      try {
        const fields = readDeadLetterHeaders(d.headers, new Date(d.movedAt).toISOString());
        return [{ id: d.id, envelope: decodeEnvelope(d.body), ...fields }];
      } catch {
        return [];
      }
    });
  const list = async (limit?: number) =>
    read(await call('listDeadLetters', () => client.listDeadLetters(queue, limit)));
  return {
    list: (options) => list(options?.limit),
    async get(id) {
      const letter = await call('getDeadLetter', () => client.getDeadLetter(queue, id));
      return letter && read([letter])[0];
    },
    count: async () => (await list()).length,
    redrive: (ids) => call('moveDeadLettersBack', () => client.moveDeadLettersBack(queue, ids)),
    purge: (ids) => call('deleteDeadLetters', () => client.deleteDeadLetters(queue, ids)),
  };
}
