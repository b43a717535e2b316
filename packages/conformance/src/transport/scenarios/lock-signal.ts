import {
  createWorker,
  type Delivery,
  defineHandler,
  type Transport,
  toOnceflowError,
} from '@onceflow/core';
import { createMemoryStore } from '@onceflow/core/testing';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { surelyHeldMs, untilJudged, waitUntil } from '../../wait.js';
import type { ScenarioContext, ScenarioGroup, TransportScenario } from '../scenario.js';

/** What each attempt's settlement came to: `resolved` or the error's code. */
type Settled = Map<number, string>;

/**
 * `transport` whose deliveries note what their `ack` and `retry` came to, by attempt. The
 * delivery is otherwise the transport's own (a proxy: its signal is read only when read).
 */
function notingSettlements(transport: Transport, settled: Settled): Transport {
  const note = (d: Delivery) => (p: Promise<void>) =>
    p.then(
      () => void settled.set(d.attempt, 'resolved'),
      (err: unknown) => {
        settled.set(d.attempt, toOnceflowError(err).code);
        throw err;
      },
    );
  const noted = (d: Delivery): Delivery =>
    new Proxy(d, {
      get(target, prop) {
        if (prop === 'ack') return () => note(target)(target.ack());
        if (prop === 'retry')
          return (o: Parameters<Delivery['retry']>[0]) => note(target)(target.retry(o));
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return new Proxy(transport, {
    get(target, prop) {
      if (prop === 'consume') {
        return (handler: (d: Delivery) => Promise<void>, options: { concurrency: number }) =>
          target.consume((d) => handler(noted(d)), options);
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * A worker without a heartbeat over a fresh queue: attempt 1 runs `first` (told when the event
 * was published: its lock was taken later), later attempts return at once. Returns once the
 * event's record is completed (by attempt 1 before its lease was taken, or by a redelivery) and
 * attempt 1's settlement has come back.
 */
async function lostLockRun(
  { fixture, t }: ScenarioContext,
  first: (ctx: {
    readonly signal: () => AbortSignal;
    readonly publishedAt: number;
  }) => Promise<void>,
): Promise<{ settled: Settled }> {
  await using fx = await fixture({ lockMs: t.lockMs });
  const settled: Settled = new Map();
  const store = createMemoryStore();
  const event = testEnvelope();
  let publishedAt = 0;
  await using worker = createWorker({
    transport: notingSettlements(fx.transport, settled),
    records: store,
    heartbeatMs: false, // nothing renews the lock: it is lost after lockMs
    concurrency: 2,
    handlers: [
      defineHandler({
        type: event.type,
        async handle(_event, ctx) {
          if (ctx.attempt === 1) await first({ signal: () => ctx.signal, publishedAt });
        },
      }),
    ],
  });
  await worker.start();
  publishedAt = Date.now();
  await fx.publish(event);
  await waitUntil(async () => (await store.get(event.source, event.id))?.state === 'completed', {
    timeoutMs: t.lockMs * 3 + t.deliveryMs * 2,
    message: 'the event to be completed by a later attempt',
  });
  await waitUntil(() => settled.has(1) || undefined, {
    timeoutMs: t.deliveryMs,
    message: 'the first attempt to settle',
  });
  return { settled };
}

const readsSignal: TransportScenario = {
  name: 'a worker’s handler that reads ctx.signal is aborted with LockLostError when its lock is lost, and its late settlement is refused',
  proves: ['lock'],
  async run(ctx) {
    // The first read shows the signal is not aborted while the lock is held only if it came
    // while the lock was surely held: a stall of the machine that delayed the delivery may
    // rightly have let it go by then. Such a run is run again.
    const seen = await untilJudged(async () => {
      let abortedWhileHeld: boolean | undefined;
      let reason: unknown;
      const { settled } = await lostLockRun(ctx, async ({ signal, publishedAt }) => {
        const s = signal();
        const aborted = s.aborted;
        if (Date.now() - publishedAt < surelyHeldMs(ctx.t.lockMs)) abortedWhileHeld = aborted;
        if (!aborted)
          await new Promise<void>((resolve) => s.addEventListener('abort', () => resolve()));
        reason = s.reason;
      });
      return abortedWhileHeld === undefined ? undefined : { abortedWhileHeld, reason, settled };
    }, 'the handler read ctx.signal too late to find the lock surely held: raise timeouts.lockMs');
    expect(seen.abortedWhileHeld, 'not aborted while the lock is held').toBe(false);
    expect(toOnceflowError(seen.reason).code, 'aborted for the lost lock').toBe('LOCK_LOST');
    expect(seen.settled.get(1), 'the late settlement').toBe('LOCK_LOST');
  },
};

const readsSignalLate: TransportScenario = {
  name: 'a worker’s handler that first reads ctx.signal after its lock was lost finds it already aborted, and its late settlement is refused',
  proves: ['lock'],
  async run(ctx) {
    const { t } = ctx;
    let aborted: boolean | undefined;
    let reason: unknown;
    const { settled } = await lostLockRun(ctx, async ({ signal }) => {
      // Past the lock's expiry without touching the signal (no heartbeat renews it).
      await new Promise((resolve) => setTimeout(resolve, t.lockMs * 2));
      const s = signal();
      aborted = s.aborted;
      reason = s.reason;
    });
    expect(aborted, 'the signal, made on first read, is already aborted').toBe(true);
    expect(toOnceflowError(reason).code).toBe('LOCK_LOST');
    expect(settled.get(1), 'the late settlement').toBe('LOCK_LOST');
  },
};

/**
 * Lock loss as a worker's handler sees it through `ctx.signal`, read at once or only after the
 * lock is gone (transports may make the signal on first read). Message-scoped locks only: a
 * consumer-scoped lock is lost with its consumer (see `locks.ts`).
 */
export const lockSignalScenarios: ScenarioGroup = (caps) =>
  caps.lock.scope === 'message' ? [readsSignal, readsSignalLate] : [];
