import { z } from 'zod';
import type {
  BacklogProbe,
  BrokerDeadLetters,
  ConsumeOptions,
  Delivery,
  TopologySetup,
  Transport,
  TransportCapabilities,
} from '../contracts/transport.js';
import { createSubscriptions } from '../transport-kit/subscriptions.js';
import { parseConsumeOptions } from '../transport-kit/consume-options.js';
import { createInFlight } from '../transport-kit/in-flight.js';
import { createLifecycle } from '../transport-kit/lifecycle.js';
import { dedupeKeyOf } from '../transport-kit/dedupe-key.js';
import { assertEncodesWithin } from '../transport-kit/message-size.js';
import { parseConfig, type SameFields } from '../transport-kit/parse-config.js';
import { type MemoryBroker, createMemoryBroker, isMemoryBroker, openQueue } from './broker.js';
import type { MemoryQueue, QueueConsumer } from './queue.js';
import { storeEnvelope } from './stored-envelope.js';

export interface MemoryTransportOptions {
  /** Shared state; transports on one broker and queue name see the same messages. Default: a private broker. */
  readonly broker?: MemoryBroker | undefined;
  /** Queue name on the broker. Default `default`. */
  readonly queue?: string | undefined;
  /** How long a dedupe key is remembered, in ms (`Infinity`: forever), or `false` for no dedupe. Default 5 minutes. */
  readonly dedupeWindowMs?: number | false | undefined;
  /** Deliver one key's messages one at a time in publish order. Fixed per queue by its first opener. Default true. */
  readonly orderingPerKey?: boolean | undefined;
  /** Largest encoded envelope accepted, in bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number | undefined;
  /** Each delivery's lock, in ms: redelivered with `attempt + 1` unless settled or renewed. Default 30 000. */
  readonly lockMs?: number | undefined;
  /**
   * After this many deliveries a message moves to the queue's dead-letter queue
   * (`<queue>.dead-letters`), read with `consumeDeadLetters`; `false` (default) keeps it forever.
   */
  readonly deliveryLimit?: number | false | undefined;
  /** Longest `retry` delay accepted, in ms. Default 7 days. */
  readonly maxDelayMs?: number | undefined;
}

/** A memory transport: a `Transport` that also closes with `await using`. */
export interface MemoryTransport
  extends Transport,
    TopologySetup,
    BacklogProbe,
    Partial<BrokerDeadLetters>,
    AsyncDisposable {
  readonly broker: MemoryBroker;
  readonly queue: string;
}

const optionsSchema = z.object({
  broker: z.custom<MemoryBroker>(isMemoryBroker, 'must be made by createMemoryBroker()').optional(),
  queue: z.string().min(1).default('default'),
  dedupeWindowMs: z
    .union([z.literal(false), z.custom<number>((v) => typeof v === 'number' && v > 0)])
    .default(300_000),
  orderingPerKey: z.boolean().default(true),
  maxMessageBytes: z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  lockMs: z.number().int().positive().default(30_000),
  deliveryLimit: z.union([z.literal(false), z.number().int().positive()]).default(false),
  maxDelayMs: z
    .number()
    .int()
    .nonnegative()
    .default(7 * 24 * 60 * 60 * 1000),
});

// A type error the day the schema and `MemoryTransportOptions` differ.
// Stryker disable next-line BooleanLiteral: a type check only, never read at run time (tsc refuses `false`): equivalent
const _optionsMatch: SameFields<z.input<typeof optionsSchema>, MemoryTransportOptions> = true;

/**
 * A faithful in-process `Transport` for tests, examples and single-process tools. Each
 * delivery holds a per-message lock of `lockMs` (renewable); when it expires the message is
 * redelivered with `attempt + 1` and the old delivery's `signal` is aborted. Retries are never
 * delivered before their delay. With a `deliveryLimit`, a message delivered that often moves to
 * the queue's dead-letter queue (`consumeDeadLetters`).
 * Publish resolves once the message is in this process's memory: nothing survives the process,
 * and it does not support distributed operations. The queue keeps a copy of each envelope, and
 * every delivery gets one of its own.
 *
 * @example
 * const broker = createMemoryBroker();
 * const transport = createMemoryTransport({ broker, queue: 'orders' });
 * await transport.publish([{ envelope }]);
 * const sub = await transport.consume(async (d) => d.ack(), { concurrency: 4 });
 */
export function createMemoryTransport(options: MemoryTransportOptions = {}): MemoryTransport {
  const o = parseConfig('memory transport options', optionsSchema, options);
  const broker = o.broker ?? createMemoryBroker();
  const capabilities: TransportCapabilities = {
    brokerDedupe: o.dedupeWindowMs === false ? false : { windowMs: o.dedupeWindowMs },
    orderingPerKey: o.orderingPerKey,
    lock: { scope: 'message', ms: o.lockMs },
    maxDelayMs: o.maxDelayMs,
    maxMessageBytes: o.maxMessageBytes,
    deliveryLimit: o.deliveryLimit,
    durability: 'in process memory only: lost when the process exits',
  };
  let queue: MemoryQueue | undefined;
  let deadLetterQueue: MemoryQueue | undefined;
  const openDeadLetters = () => {
    deadLetterQueue ??= openQueue(broker, `${o.queue}.dead-letters`, {
      orderingPerKey: o.orderingPerKey,
      dedupeWindowMs: false, // every dead letter is kept, even two of one event
      deadLetters: false,
    });
    return deadLetterQueue;
  };
  const open = () => {
    queue ??= openQueue(broker, o.queue, {
      orderingPerKey: o.orderingPerKey,
      dedupeWindowMs: o.dedupeWindowMs,
      deadLetters:
        o.deliveryLimit === false ? false : { after: o.deliveryLimit, queue: openDeadLetters },
    });
    return queue;
  };
  const subscriptions = createSubscriptions();
  const lifecycle = createLifecycle({
    name: `memory transport ${o.queue}`,
    start: async () => void open(),
    close: () => subscriptions.closeAll(),
  });
  const ensureOpen = (op: string) => {
    lifecycle.assertOpen(op);
    return open();
  };

  const subscribe = async (
    q: MemoryQueue,
    handler: (d: Delivery) => Promise<void>,
    consumeOptions: ConsumeOptions,
  ) => {
    const { concurrency } = parseConsumeOptions(consumeOptions);
    const consumer: QueueConsumer = {
      handler,
      lockMs: o.lockMs,
      inFlight: createInFlight(concurrency),
      maxDelayMs: o.maxDelayMs,
    };
    q.attach(consumer);
    return subscriptions.track(async () => {
      q.detach(consumer);
      await consumer.inFlight.idle();
    });
  };

  const transport: MemoryTransport = {
    name: 'memory',
    destination: o.queue,
    capabilities,
    broker,
    queue: o.queue,
    start: () => lifecycle.start(),
    async publish(messages) {
      const q = ensureOpen('publish');
      // Every message is checked before any is stored: an oversized one refuses the whole batch.
      // The queue keeps envelopes, not their encoding, so nothing is encoded unless a message
      // comes near the limit (see `assertEncodesWithin`).
      for (const m of messages) assertEncodesWithin(m.envelope, o.maxMessageBytes);
      const items = messages.map((m) => ({
        envelope: storeEnvelope(m.envelope),
        dedupeKey: dedupeKeyOf(m),
      }));
      q.enqueue(items);
    },
    async backlog() {
      return { queue: o.queue, ...ensureOpen('backlog').backlog() };
    },
    // async: a closed transport rejects, as the contract says, rather than throwing.
    consume: async (handler, consumeOptions) =>
      subscribe(ensureOpen('consume'), handler, consumeOptions),
    ...(o.deliveryLimit === false
      ? {}
      : {
          consumeDeadLetters: async (
            handler: (d: Delivery) => Promise<void>,
            opts: ConsumeOptions,
          ) => {
            lifecycle.assertOpen('consumeDeadLetters');
            return subscribe(openDeadLetters(), handler, opts);
          },
        }),
    close: () => lifecycle.close(),
    [Symbol.asyncDispose]() {
      return transport.close();
    },
  };
  return transport;
}
