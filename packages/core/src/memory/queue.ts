import type { Delivery } from '../contracts/transport.js';
import { LockLostError } from '../errors.js';
import { checkRetryDelay } from '../transport-kit/arguments.js';
import type { InFlight } from '../transport-kit/in-flight.js';
import { type DeliveryInit, runDelivery } from '../transport-kit/run-delivery.js';
import type { RetryOptions } from '../transport-kit/settlement.js';
import { type MessageLock, type StoredMessage, deliverable, nextDueAt } from './queue-state.js';
import { loadEnvelope, type StoredEnvelope } from './stored-envelope.js';

/** Settings fixed by the first transport that opens a queue. */
export interface QueueSettings {
  readonly orderingPerKey: boolean;
  /**
   * How long a dedupe key is remembered (ms; `Infinity`: forever), or `false` for no dedupe. One
   * window per queue keeps the remembered keys in expiry order.
   */
  readonly dedupeWindowMs: number | false;
  /** After `after` deliveries a message moves to `queue()` (the broker's own dead-letter queue). */
  readonly deadLetters: false | { readonly after: number; readonly queue: () => MemoryQueue };
}

/** A subscription as the queue sees it. */
export interface QueueConsumer {
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly lockMs: number;
  readonly inFlight: InFlight;
  /** The consuming transport's declared limit for `retry`. */
  readonly maxDelayMs: number;
}

/** A message to add: `attempt` is its first delivery's (1; a moved dead letter keeps its count). */
export interface QueueItem {
  readonly envelope: StoredEnvelope;
  /** Dropped when the queue remembers this key (see `dedupeWindowMs`). */
  readonly dedupeKey: string;
  readonly attempt?: number | undefined;
}

export interface MemoryQueue {
  readonly settings: QueueSettings;
  enqueue(items: readonly QueueItem[]): void;
  attach(consumer: QueueConsumer): void;
  detach(consumer: QueueConsumer): void;
  /** Messages waiting or in flight. */
  depth(): number;
  /** Messages by state now: deliverable, waiting out a delay, held by a delivery. */
  backlog(): { ready: number; delayed: number; inFlight: number };
}

/** Node's longest timer; a later wake-up fires early, and the queue plans again. */
const LONGEST_TIMER_MS = 2_147_483_647;

/**
 * One named queue's state and dispatcher, shared by every memory transport opened on it.
 * Each operation completes synchronously, so interleaved async callers never see half a change.
 * Handlers are started from `setImmediate`, never inside the dispatcher, so it never runs inside
 * itself. It holds one timer at most, for the next lock end or due delay: an idle queue holds
 * none, so it never keeps a process alive for nothing.
 */
export function createMemoryQueue(name: string, settings: QueueSettings): MemoryQueue {
  /** Every message, in publish order. */
  const messages = new Set<StoredMessage>();
  /** The messages held by a delivery, and each one's lock. */
  const locks = new Map<StoredMessage, MessageLock>();
  /** Remembered dedupe keys and when each is forgotten, in insertion (and so expiry) order. */
  const dedupe = new Map<string, number>();
  const consumers = new Set<QueueConsumer>();
  let wake: ReturnType<typeof setTimeout> | undefined;

  const lockLost = (m: StoredMessage, what: string) =>
    new LockLostError(`lock on event "${m.envelope.id}" of queue "${name}" ${what}`);

  /** Drops the keys whose window has passed: all at the front, as every key has one window. */
  const forgetExpired = (now: number) => {
    for (const [key, until] of dedupe) {
      if (until > now) return;
      dedupe.delete(key);
    }
  };

  /** Whether `key` is remembered; remembers it for a window from `now` if not. */
  const remembered = (key: string, now: number): boolean => {
    const window = settings.dedupeWindowMs;
    if (window === false) return false;
    if (dedupe.has(key)) return true;
    dedupe.set(key, now + window);
    return false;
  };

  /** Ends the locks due by `now`: each message is delivered again, with `attempt + 1`. */
  const expireLocks = (now: number) => {
    for (const [m, lock] of locks) {
      if (lock.until > now) continue;
      locks.delete(m);
      m.attempt++;
      m.availableAt = now;
      lock.controller.abort(lockLost(m, 'expired'));
    }
  };

  const nextLockEnd = (): number | undefined => {
    let next: number | undefined;
    for (const lock of locks.values()) next = Math.min(next ?? lock.until, lock.until);
    return next;
  };

  /** Past the delivery limit: to the dead-letter queue, keeping its delivery count. */
  const movedToDeadLetters = (m: StoredMessage): boolean => {
    const dead = settings.deadLetters;
    if (!dead || m.attempt <= dead.after) return false;
    messages.delete(m);
    // The dead-letter queue remembers no keys: the id only fills the field.
    dead
      .queue()
      .enqueue([{ envelope: m.envelope, dedupeKey: m.envelope.id, attempt: m.attempt - 1 }]);
    return true;
  };

  const deliver = (m: StoredMessage, consumer: QueueConsumer, now: number) => {
    const lock: MessageLock = { until: now + consumer.lockMs, controller: new AbortController() };
    locks.set(m, lock);
    const held = () => {
      if (locks.get(m) !== lock) throw lockLost(m, 'is no longer held');
    };
    const init: DeliveryInit = {
      envelope: loadEnvelope(m.envelope),
      attempt: m.attempt,
      signal: lock.controller.signal,
      async ack() {
        held();
        locks.delete(m);
        messages.delete(m);
        pump();
      },
      async retry({ delayMs }: RetryOptions) {
        held();
        checkRetryDelay(delayMs, consumer.maxDelayMs);
        locks.delete(m);
        m.attempt++;
        m.availableAt = Date.now() + delayMs;
        pump();
      },
      async renewLock() {
        held();
        lock.until = Date.now() + consumer.lockMs; // the planned wake-up finds it not due and plans again
      },
    };
    // setImmediate, not a microtask: a handler that retries at once must not starve timers and I/O.
    const start = () => new Promise<void>((resolve) => setImmediate(resolve));
    void consumer.inFlight
      .run(() => start().then(() => runDelivery(consumer.handler, init)))
      .finally(pump);
  };

  const freeConsumer = (): QueueConsumer | undefined => {
    for (const c of consumers) if (c.inFlight.hasRoom) return c;
    return undefined;
  };

  /**
   * One pass over the deliverable messages. `moved`: a dead letter left (the next message of its
   * key may go in another pass); `full`: no consumer has room (or there is none) for more.
   */
  const dispatch = (now: number): { moved: boolean; full: boolean } => {
    let moved = false;
    for (const m of deliverable(messages, locks, now, settings.orderingPerKey)) {
      if (movedToDeadLetters(m)) {
        moved = true;
        continue;
      }
      const consumer = freeConsumer();
      if (!consumer) return { moved, full: true };
      deliver(m, consumer, now);
    }
    return { moved, full: freeConsumer() === undefined };
  };

  /** Runs the queue: ends due locks, hands out what is due, and plans the next wake-up. */
  function pump(): void {
    const now = Date.now();
    expireLocks(now);
    let pass = dispatch(now);
    while (pass.moved) pass = dispatch(now);
    let next = nextLockEnd();
    // With every consumer busy (or none), a settlement or a new consumer runs the queue again.
    if (!pass.full) next = nextDueAt(messages, now, next);
    clearTimeout(wake);
    wake =
      next === undefined ? undefined : setTimeout(pump, Math.min(LONGEST_TIMER_MS, next - now));
  }

  return {
    settings,
    enqueue(items) {
      const now = Date.now();
      forgetExpired(now);
      for (const item of items) {
        if (remembered(item.dedupeKey, now)) continue;
        messages.add({ envelope: item.envelope, attempt: item.attempt ?? 1, availableAt: now });
      }
      pump();
    },
    attach(consumer) {
      consumers.add(consumer);
      pump();
    },
    detach(consumer) {
      consumers.delete(consumer);
      pump();
    },
    depth: () => messages.size,
    backlog() {
      const now = Date.now();
      const counts = { ready: 0, delayed: 0, inFlight: 0 };
      for (const m of messages) {
        if (locks.has(m)) counts.inFlight++;
        else if (m.availableAt > now) counts.delayed++;
        else counts.ready++;
      }
      return counts;
    },
  };
}
