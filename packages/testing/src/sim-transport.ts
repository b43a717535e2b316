import {
  type Delivery,
  type Envelope,
  LockLostError,
  type Transport,
  TransportUnavailableError,
} from '@onceflow/core';
import type { VirtualClock } from './clock.js';
import { type Fault, describeFault, outageAt } from './faults.js';
import { createDeliveryRegistry, type DeliveryRegistry, type SimDelivery } from './sim-delivery.js';
import { createDueQueue } from './due-queue.js';
import type { Timeline } from './timeline.js';

/** One message on the simulated broker: an event's copy, its attempts and when it is due. */
export interface SimMessage {
  readonly seq: number;
  readonly envelope: Envelope;
  /** Words for the timeline when this copy is special (`duplicate`, `delayed 150ms`). */
  readonly why: string | undefined;
  attempt: number;
  /** Virtual epoch ms from which it may be delivered. */
  availableAt: number;
  state: 'queued' | 'locked' | 'done';
  lockedUntil: number;
  /** The delivery holding its lock, while `locked`. */
  holder: SimDelivery | undefined;
}

/** A delivery the simulation started, and how it goes on. */
export interface Started {
  readonly sim: SimDelivery;
  readonly message: SimMessage;
  /** Resolves when the worker's handling of the delivery returned. */
  readonly done: Promise<void>;
  /** Resolves when the delivery paused at a lock-expiry point. */
  readonly paused: Promise<void>;
  /** Resumes a paused delivery. */
  resume(): void;
}

export interface SimTransport extends Transport {
  readonly registry: DeliveryRegistry;
  readonly messages: readonly SimMessage[];
  /** Queues a copy of `envelope`, due at `availableAt`. */
  enqueue(envelope: Envelope, availableAt: number, why?: string): void;
  /** Puts `message` back in the queue, due at `availableAt` (a lock that runs out, an outage). */
  requeue(message: SimMessage, availableAt: number): void;
  /** The queued message due first (earliest `availableAt`, then publish order). */
  due(): SimMessage | undefined;
  /** Hands `message` to the consumer as its next attempt. */
  deliver(message: SimMessage): Started;
}

export interface SimTransportOptions {
  readonly clock: VirtualClock;
  readonly timeline: Timeline;
  readonly faults: readonly Fault[];
  readonly lockMs: number;
}

const DAY = 86_400_000;
const NEVER_ABORTED = new AbortController().signal;

/**
 * The simulated broker: one queue, at-least-once, no broker dedupe and no per-key ordering (so
 * the worker's guard and the handler must cope), a lock per delivery of `lockMs` virtual ms. It
 * delivers only when the simulation tells it (`deliver`); settlements follow the `Delivery`
 * contract: the first wins, a lost lock refuses them with `LockLostError`, a broker outage with
 * `TransportUnavailableError` (the message then comes back once its lock expires), and after a
 * crash they are lost.
 */
export function createSimTransport(options: SimTransportOptions): SimTransport {
  const { clock, timeline, faults, lockMs } = options;
  const registry = createDeliveryRegistry();
  const messages: SimMessage[] = [];
  const deliveriesOf = new Map<string, number>();
  let consumer: ((delivery: Delivery) => Promise<void>) | undefined;
  /** Aborts a delivery's signal (lock lost), where it was read. */
  const aborts = new WeakMap<SimDelivery, () => void>();

  const brokerDown = () => outageAt(faults, 'broker-outage', clock.elapsed()) !== undefined;

  const planFor = (event: string, n: number): Fault | undefined =>
    faults.find(
      (f) =>
        (f.kind === 'crash' || f.kind === 'lock-expiry' || f.kind === 'fail') &&
        f.event === event &&
        f.delivery === n,
    );

  const queue = createDueQueue<SimMessage>((m) => m.state === 'queued');
  const requeue = (message: SimMessage, availableAt: number) => {
    message.state = 'queued';
    message.availableAt = availableAt;
    queue.push(message);
  };
  const enqueue = (envelope: Envelope, availableAt: number, why?: string) => {
    const message: SimMessage = {
      seq: messages.length,
      envelope,
      why,
      attempt: 0,
      availableAt,
      state: 'queued',
      lockedUntil: 0,
      holder: undefined,
    };
    messages.push(message);
    queue.push(message);
  };

  function deliver(message: SimMessage): Started {
    if (consumer === undefined) throw new Error('simulation: nothing consumes the transport');
    const event = message.envelope.id;
    const n = (deliveriesOf.get(event) ?? 0) + 1;
    deliveriesOf.set(event, n);
    // A holder still set is an attempt paused past its lock's expiry: it has lost the lock.
    const previous = message.holder;
    if (previous !== undefined) {
      previous.lockLost = true;
      aborts.get(previous)?.();
    }
    message.attempt += 1;
    message.state = 'locked';
    message.lockedUntil = clock.now() + lockMs;
    // Created on first read: most deliveries never read their signal.
    let abort: AbortController | undefined;
    const lockLost = () => new LockLostError(`simulated: the lock on ${event} expired`);
    const envelope: Envelope = { ...message.envelope };
    const fault = planFor(event, n);
    const why = message.why === undefined ? '' : ` (${message.why})`;
    let reachPause!: () => void;
    let resume!: () => void;
    const paused = new Promise<void>((r) => {
      reachPause = r;
    });
    const resumed = new Promise<void>((r) => {
      resume = r;
    });
    const sim: SimDelivery = {
      event,
      number: n,
      attempt: message.attempt,
      fault,
      line: timeline.open(clock.elapsed(), `deliver ${event} attempt ${message.attempt}${why}`),
      crashed: false,
      lockLost: false,
      pauseHere: async () => {
        if (fault !== undefined) sim.line.note(describeFault(fault));
        sim.line.end();
        reachPause();
        await resumed;
        sim.line = timeline.open(clock.elapsed(), `resume ${event} attempt ${sim.attempt}`);
        if (sim.lockLost) sim.line.note('lock lost');
      },
    };
    registry.add(envelope, sim);
    message.holder = sim;
    aborts.set(sim, () => abort?.abort(lockLost()));

    let settled = false;
    const settle = async (what: 'ack' | 'retry', delayMs: number): Promise<void> => {
      if (settled) return;
      settled = true;
      if (sim.crashed) {
        sim.line.note(`${what} lost (crashed)`);
        return;
      }
      if (fault?.kind === 'crash' && fault.point === 'after-record') {
        sim.crashed = true;
        sim.line.note(describeFault(fault));
        return;
      }
      if (sim.lockLost) {
        sim.line.note(`${what} refused: lock lost`);
        throw lockLost();
      }
      if (brokerDown()) {
        sim.line.note(`${what} failed: broker down`);
        throw new TransportUnavailableError(`simulated broker outage (${what})`);
      }
      message.holder = undefined;
      if (what === 'ack') {
        message.state = 'done';
        sim.line.note('acked');
      } else {
        requeue(message, clock.now() + delayMs);
        sim.line.note(`retry in ${delayMs}ms`);
      }
    };
    const delivery: Delivery = {
      envelope,
      attempt: message.attempt,
      get signal() {
        // Only a delivery paused past its lock's expiry can lose it: the others share one signal.
        if (fault?.kind !== 'lock-expiry') return NEVER_ABORTED;
        if (abort === undefined) {
          abort = new AbortController();
          if (sim.lockLost) abort.abort(lockLost());
        }
        return abort.signal;
      },
      ack: () => settle('ack', 0),
      retry: ({ delayMs }) => settle('retry', delayMs),
    };
    const done = consumer(delivery).then(
      () => undefined,
      (err: unknown) => {
        sim.line.note(`worker failed: ${String(err)}`);
      },
    );
    const afterDone = done.then(() => {
      sim.line.end();
      // Unsettled (crashed, refused): the broker offers it again once its lock expires.
      if (message.holder === sim && message.state === 'locked') {
        message.holder = undefined;
        requeue(message, message.lockedUntil);
      }
    });
    return { sim, message, done: afterDone, paused, resume };
  }

  return {
    name: 'simulation',
    destination: 'simulation',
    capabilities: {
      brokerDedupe: false,
      orderingPerKey: false,
      lock: { scope: 'message', ms: lockMs },
      maxDelayMs: 30 * DAY,
      maxMessageBytes: 16 * 1024 * 1024,
      deliveryLimit: false,
      durability: 'simulated: held in memory on virtual time',
    },
    registry,
    messages,
    enqueue,
    requeue,
    due: queue.next,
    deliver,
    async publish(outgoing) {
      if (brokerDown()) throw new TransportUnavailableError('simulated broker outage (publish)');
      for (const m of outgoing) enqueue(m.envelope, clock.now(), 'published by the worker');
    },
    async consume(handler) {
      consumer = handler;
      return {
        close: async () => {
          consumer = undefined;
        },
      };
    },
    async close() {
      consumer = undefined;
    },
  };
}
