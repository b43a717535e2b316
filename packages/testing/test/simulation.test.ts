import { defineHandler, NonRetryableError } from '@onceflow/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  type Fault,
  checkEffectivelyOnce,
  isEffectivelyOnceViolation,
  runSimulation,
  type SimEvent,
  sampleHistory,
} from '../src/index.js';
import { payments } from './fixtures.js';

const faults: readonly Fault[] = [
  { kind: 'fail', event: 'evt_1', delivery: 1 },
  { kind: 'fail', event: 'evt_1', delivery: 2 },
  { kind: 'duplicate', event: 'evt_2', afterMs: 10 },
  { kind: 'crash', event: 'evt_2', delivery: 1, point: 'after-record' },
  { kind: 'lock-expiry', event: 'evt_3', delivery: 1, point: 'after-handler' },
  { kind: 'broker-outage', atMs: 150, forMs: 2_000 },
  { kind: 'store-outage', atMs: 30_000, forMs: 1_000 },
];
const handlers = [defineHandler({ type: 'payment', handle: async () => {} })];

test('the same seed gives the same history, byte for byte', async () => {
  const a = await runSimulation({ handlers, events: payments, faults, seed: 7 });
  const b = await runSimulation({ handlers, events: payments, faults, seed: 7 });
  expect(String(a)).toBe(String(b));
  expect(String(a).length).toBeGreaterThan(0);
  const other = await runSimulation({ handlers, events: payments, faults, seed: 8 });
  // The seed draws the backoff jitter: another seed retries at other times.
  expect(String(other)).not.toBe(String(a));
});

test('the same fast-check seed finds the same counterexample, byte for byte', async () => {
  const counted = () => {
    const seen: string[] = [];
    return {
      seen,
      handler: defineHandler({
        type: 'payment',
        handle: async (_e, ctx) => void seen.push(ctx.envelope.id),
      }),
    };
  };
  const run = async () => {
    const err = await checkEffectivelyOnce((s: ReturnType<typeof counted>) => s.handler, {
      events: payments,
      seed: 1234,
      setup: counted,
      invariant: (s) => s.seen.length === 3 || `${s.seen.length} handler runs`,
    }).catch((e: unknown) => e);
    if (!isEffectivelyOnceViolation(err)) throw new Error('expected a violation');
    return err.message;
  };
  expect(await run()).toBe(await run());
});

test('retries back off on virtual time and end in a dead letter, without real timers', async () => {
  const failing = defineHandler({
    type: 'payment',
    handle: async () => {
      throw new Error('downstream is down');
    },
  });
  const started = performance.now();
  const result = await runSimulation({
    handlers: [failing],
    events: payments.slice(0, 1),
    retry: { maxAttempts: 10, baseDelayMs: 60_000, maxDelayMs: 4 * 3_600_000, jitter: 'none' },
  });
  // On a real clock the first backoff alone would take a minute; the bound is generous as a run
  // that takes 10–20 ms on a quiet machine took 0.4 s at a load of 6, and CI sees loads of 40.
  expect(performance.now() - started).toBeLessThan(15_000);
  expect(result.states.get('evt_1')).toBe('dead-lettered');
  expect(result.deliveries).toBe(10);
  // 1 + 2 + 4 + … + 128 minutes, then 4 h (the ceiling) before the tenth attempt
  expect(result.elapsedMs).toBe((255 + 240) * 60_000);
  expect(String(result)).toMatch(/dead-lettered: attempts exhausted · acked$/);
});

test('a NonRetryableError is dead-lettered at once', async () => {
  const refusing = defineHandler({
    type: 'payment',
    handle: async () => {
      throw new NonRetryableError('card declined');
    },
  });
  const result = await runSimulation({ handlers: [refusing], events: payments.slice(0, 1) });
  expect(result.states.get('evt_1')).toBe('dead-lettered');
  expect(result.deliveries).toBe(1);
});

test('retention purges records on virtual time: a duplicate after it runs the handler again', async () => {
  const seen: string[] = [];
  const handler = defineHandler({
    type: 'payment',
    handle: async (_e, ctx) => void seen.push(ctx.envelope.id),
  });
  const day = 86_400_000;
  const result = await runSimulation({
    handlers: [handler],
    events: payments.slice(0, 1),
    faults: [{ kind: 'duplicate', event: 'evt_1', afterMs: 5 * day }],
    retention: { keepMs: 4 * day, everyMs: 3_600_000 },
  });
  expect(seen).toEqual(['evt_1', 'evt_1']);
  expect(String(result)).toMatch(/retention: purged 1 records older than 4d/);
});

test('faults injected by seed: the same seed draws the same faults and the same run', async () => {
  const ids = payments.map((e) => e.id);
  const drawn = [1, 2, 3, 4, 5].map((seed) => sampleHistory(ids, seed, { maxFaults: 5 }));
  expect(sampleHistory(ids, 3, { maxFaults: 5 })).toEqual(drawn[2]);
  expect(drawn.some((h) => h.faults.length > 0)).toBe(true);
  const run = () =>
    runSimulation({ handlers, events: payments, ...sampleHistory(ids, 3, { maxFaults: 5 }) });
  expect(String(await run())).toBe(String(await run()));
});

test('events can be generated too: a fast-check arbitrary of event lists', async () => {
  const events = fc
    .integer({ min: 1, max: 4 })
    .map((n) =>
      payments.concat(
        Array.from(
          { length: n },
          (_, i): SimEvent => ({ ...(payments[0] as SimEvent), id: `extra_${i}` }),
        ),
      ),
    );
  const err = await checkEffectivelyOnce(
    (s: { runs: number }) =>
      defineHandler({
        type: 'payment',
        handle: async () => {
          s.runs += 1;
        },
      }),
    {
      events,
      setup: () => ({ runs: 0 }),
      invariant: (s, run) =>
        s.runs === run.states.size || `${s.runs} runs for ${run.states.size} events`,
    },
  ).catch((e: unknown) => e);
  if (!isEffectivelyOnceViolation(err)) throw new Error('expected a violation');
  // Shrunk to the fewest events: the three payments and one extra.
  expect(err.message).toMatch(/extra_0/);
  expect(err.message).not.toMatch(/extra_1/);
});

test('a run sets no real timer but the worker shutdown limit it clears at the end', async () => {
  const set = { timeouts: 0, intervals: 0, immediates: 0 };
  const { setTimeout: timeout, setInterval: interval, setImmediate: immediate } = globalThis;
  globalThis.setTimeout = ((...args: Parameters<typeof timeout>) => {
    set.timeouts += 1;
    return timeout(...args);
  }) as typeof timeout;
  globalThis.setInterval = ((...args: Parameters<typeof interval>) => {
    set.intervals += 1;
    return interval(...args);
  }) as typeof interval;
  globalThis.setImmediate = ((...args: Parameters<typeof immediate>) => {
    set.immediates += 1;
    return immediate(...args);
  }) as typeof immediate;
  try {
    await runSimulation({ handlers, events: payments, faults, seed: 7 });
  } finally {
    Object.assign(globalThis, {
      setTimeout: timeout,
      setInterval: interval,
      setImmediate: immediate,
    });
  }
  expect(set).toEqual({ timeouts: 1, intervals: 0, immediates: 0 });
});
