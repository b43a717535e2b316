import type { DeadLetter, DeadLetterReason, Delivery } from '../contracts/transport.js';
import { LockLostError } from '../errors.js';
import { checkExtendLock, checkRetryDelay } from '../transport-kit/arguments.js';
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
}

/** A subscription as the queue sees it. */
export interface QueueConsumer {
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly lockMs: number;
  readonly inFlight: InFlight;
  /** The consuming transport's declared limits for `retry` and `extendLock`. */
  readonly maxDelayMs: number;
  readonly maxLockMs: number;
}

/** A stored dead letter; reads hand out an envelope of their own (`loadEnvelope`). */
export interface StoredDeadLetter extends Omit<DeadLetter, 'envelope'> {
  readonly envelope: StoredEnvelope;
}

export interface MemoryQueue {
  readonly settings: QueueSettings;
  /** Adds messages; `dedupe` (key → window) drops keys seen within their window. */
  enqueue(
    items: readonly { envelope: StoredEnvelope; dedupe?: [string, number] | undefined }[],
  ): void;
  attach(consumer: QueueConsumer): void;
  detach(consumer: QueueConsumer): void;
  /** Messages waiting or in flight (not dead letters). */
  depth(): number;
  readonly deadLetters: Map<string, StoredDeadLetter>;
  /** Re-enqueues dead letters as new messages with attempt 1. */
  redrive(letters: readonly StoredDeadLetter[]): void;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Drops expired dedupe keys from the front of the map, stopping at the first live one: keys are
 * kept in insertion order, which is expiry order while everyone on the queue uses one window. An
 * expired key behind a longer-lived one merely stays a while; lookups compare the time anyway.
 * Each key is dropped once, so the cost per publish stays flat however many keys are remembered.
 */
function forgetExpired(dedupe: Map<string, number>, now: number): void {
  for (const [key, until] of dedupe) {
    if (until > now) return;
    dedupe.delete(key);
  }
}

/**
 * One named queue's state and dispatcher, shared by every memory transport opened on it.
 * Each operation completes synchronously, so interleaved async callers never see half a change.
 * Handlers are started from `setImmediate`, never inside the dispatcher.
 */
export function createMemoryQueue(name: string, settings: QueueSettings): MemoryQueue {
  const messages = new Map<number, StoredMessage>();
  const deadLetters = new Map<string, StoredDeadLetter>();
  const dedupe = new Map<string, number>();
  const consumers: QueueConsumer[] = [];
  let seq = 0;
  let dlSeq = 0;
  let turn = 0;
  let pumping = false;
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;

  const add = (envelope: StoredEnvelope) => {
    seq++;
    messages.set(seq, {
      seq,
      envelope,
      attempt: 1,
      availableAt: Date.now(),
      lastError: undefined,
      lock: undefined,
    });
  };

  const unlock = (m: StoredMessage) => {
    if (m.lock?.timer) clearTimeout(m.lock.timer);
    m.lock = undefined;
  };

  const armLock = (m: StoredMessage, lock: MessageLock) => {
    if (lock.timer) clearTimeout(lock.timer);
    lock.timer = setTimeout(
      () => {
        if (m.lock !== lock) return;
        if (Date.now() < lock.until) return armLock(m, lock);
        unlock(m);
        m.attempt++;
        m.availableAt = Date.now();
        lock.controller.abort(
          new LockLostError(`lock on message ${m.seq} of queue "${name}" expired`),
        );
        pump();
      },
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
        m.lastError = error ?? m.lastError;
        pump();
      },
      async deadLetter(reason: DeadLetterReason) {
        held();
        unlock(m);
        messages.delete(m.seq);
        const id = `dl-${++dlSeq}`;
        deadLetters.set(id, {
          id,
          envelope: m.envelope,
          reason: reason.reason,
          attempts: m.attempt,
          lastError: reason.error ?? m.lastError,
          deadLetteredAt: new Date().toISOString(),
        });
        pump();
      },
      async extendLock(ms: number) {
        held();
        checkExtendLock(ms, consumer.maxLockMs);
        lock.until = Date.now() + ms;
        armLock(m, lock);
      },
    };
    // setImmediate, not a microtask: a handler that retries at once must not starve timers and I/O.
    const start = () => new Promise<void>((resolve) => setImmediate(resolve));
    void consumer.inFlight
      .run(() => start().then(() => runDelivery(consumer.handler, init)))
      .finally(pump);
  };

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

  const scheduleWake = (now: number) => {
    const at = consumers.length > 0 ? nextAvailableAt(messages.values(), now) : undefined;
    if (wake && (at === undefined || wake.at > at)) {
      clearTimeout(wake.timer);
      wake = undefined;
    }
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
    if (pumping || consumers.length === 0) return;
    pumping = true;
    try {
      const now = Date.now();
      let full = false;
      for (const m of deliverable(messages.values(), now, settings.orderingPerKey)) {
        const consumer = nextConsumer();
        if (!consumer) {
          full = true; // a settlement frees a slot and pumps again
          break;
        }
        deliver(m, consumer);
      }
      if (!full) scheduleWake(now);
    } finally {
      pumping = false;
    }
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
          if (until !== undefined && until > now) continue;
          // An expired key goes back in at the end, which keeps the map in expiry order.
          if (until !== undefined) dedupe.delete(key);
          dedupe.set(key, now + windowMs);
        }
        add(item.envelope);
      }
      pump();
    },
    attach(consumer) {
      consumers.push(consumer);
      pump();
    },
    detach(consumer) {
      const i = consumers.indexOf(consumer);
      if (i >= 0) consumers.splice(i, 1);
      scheduleWake(Date.now());
    },
    depth: () => messages.size,
    deadLetters,
    redrive(letters) {
      for (const letter of letters) add(letter.envelope);
      pump();
    },
  };
}
