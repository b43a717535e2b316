import { createInFlight, decodeDelivery, runDelivery } from '@onceflow/core/kit';
import {
  type Delivery,
  type Logger,
  type Subscription,
  errorLogFields,
  eventLogFields,
} from '@onceflow/core';
import { type DeliveryDeps, leasedDelivery } from './delivery.js';
import type { ClaimedMessage } from './messages.js';
import type { Waker } from './waker.js';

export interface ConsumerDeps extends DeliveryDeps {
  readonly handler: (delivery: Delivery) => Promise<void>;
  readonly concurrency: number;
  readonly pollIntervalMs: number;
  readonly dedupeWindowMs: number;
  /** Woken by same-process publishes; the loop wakes itself after each settlement. */
  readonly waker: Waker;
  readonly logger: Logger;
}

const SWEEP_EVERY_MS = 60_000;

/**
 * The polling consumer of one queue. Leases at most `concurrency - inFlight` messages per
 * IMMEDIATE transaction, runs each through the kit's `runDelivery`, and sleeps until the next
 * message becomes visible (a delayed retry or an expiring lease), a same-process publish, a
 * settlement, or `pollIntervalMs` at most (messages other processes publish). Database errors
 * (the file locked past busy_timeout, a full disk) are logged and the loop polls again.
 *
 * `close()` stops leasing, then resolves once every in-flight handler has returned and its
 * settlement is recorded (an unsettled delivery is retried at once by `runDelivery`). Idempotent.
 */
export function startConsumer(deps: ConsumerDeps): Subscription {
  const { store, waker, logger } = deps;
  const inFlight = createInFlight(deps.concurrency);
  let closing = false;
  let lastSweep = 0;

  const deliver = async (message: ClaimedMessage): Promise<void> => {
    // Not an envelope: it reaches the worker as `onceflow.undecodable`, recorded as a dead letter.
    const envelope = decodeDelivery(message.envelope);
    const init = leasedDelivery(deps, message, envelope);
    try {
      await runDelivery(deps.handler, init, {
        onError: (err) =>
          logger.warn(
            {
              ...eventLogFields(envelope, init.attempt),
              ...errorLogFields(err),
              queue: deps.queue,
            },
            'settlement not recorded',
          ),
      });
    } finally {
      init.dispose();
      waker.wake();
    }
  };

  /** Leases what it can; returns how long to sleep before the next look. */
  const poll = (): number => {
    const now = Date.now();
    if (now - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = now;
      store.sweep(deps.dedupeWindowMs);
    }
    const next = store.nextVisibleAt();
    if (next === undefined) return deps.pollIntervalMs;
    if (next > now) return Math.min(deps.pollIntervalMs, next - now);
    const claimed = store.claim(inFlight.limit - inFlight.size, deps.lockMs);
    for (const message of claimed) void inFlight.run(() => deliver(message));
    // Nothing leasable although something is visible: its key is busy or another process won it.
    return claimed.length > 0 ? 0 : deps.pollIntervalMs;
  };

  const loop = (async () => {
    while (!closing) {
      await inFlight.whenRoom();
      if (closing) break;
      let sleepMs: number;
      try {
        sleepMs = poll();
      } catch (err) {
        logger.warn({ err, queue: deps.queue }, 'embedded consumer: poll failed; retrying');
        sleepMs = deps.pollIntervalMs;
      }
      if (sleepMs > 0) await waker.wait(sleepMs);
    }
  })();

  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        closing = true;
        waker.wake();
        await loop;
        await inFlight.idle();
      })();
      return closed;
    },
  };
}
