import { defineHandler, type HandlerContext } from '@onceflow/core';
import { expect, test } from 'vitest';
import { type Fault, runSimulation, type SimEvent } from '../src/index.js';
import { payments } from './fixtures.js';

/** One run of a handler that notes each call, with `faults`; its timeline as lines. */
async function run(faults: readonly Fault[], events: readonly SimEvent[] = payments.slice(0, 1)) {
  const calls: { id: string; attempt: number; aborted: boolean }[] = [];
  const handler = defineHandler({
    type: 'payment',
    handle: async (_event, ctx: HandlerContext) => {
      calls.push({ id: ctx.envelope.id, attempt: ctx.attempt, aborted: ctx.signal.aborted });
    },
  });
  const result = await runSimulation({ handlers: [handler], events, faults });
  return { calls, result, lines: String(result).split('\n') };
}

test('crash before the handler: the lease waits out its expiry, the next attempt runs it', async () => {
  const { calls, lines, result } = await run([
    { kind: 'crash', event: 'evt_1', delivery: 1, point: 'before-handler' },
  ]);
  expect(lines).toEqual([
    't=    0ms deliver evt_1 attempt 1 · lease taken · crash before the handler · retry record lost (crashed) · retry lost (crashed)',
    't=30000ms deliver evt_1 attempt 2 · lease taken · handler ran · completed · acked',
  ]);
  expect(calls.map((c) => c.attempt)).toEqual([2]);
  expect(result.states.get('evt_1')).toBe('completed');
});

test('crash after the effect: the handler runs again (its effect twice, unless it is idempotent)', async () => {
  const { calls, lines } = await run([
    { kind: 'crash', event: 'evt_1', delivery: 1, point: 'after-effect' },
  ]);
  expect(lines[0]).toBe(
    't=    0ms deliver evt_1 attempt 1 · lease taken · handler ran · crash after effect, before the record · record lost (crashed) · ack lost (crashed)',
  );
  expect(calls).toHaveLength(2);
});

test('crash after the record: the redelivery is acked as a duplicate, the handler not run', async () => {
  const { calls, lines } = await run([
    { kind: 'crash', event: 'evt_1', delivery: 1, point: 'after-record' },
  ]);
  expect(lines).toEqual([
    't=    0ms deliver evt_1 attempt 1 · lease taken · handler ran · completed · crash after the record, before the ack',
    't=30000ms deliver evt_1 attempt 2 · already processed · acked',
  ]);
  expect(calls).toHaveLength(1);
});

test('lock expiry mid-handler: the stale attempt resumes with ctx.signal aborted and its writes refused', async () => {
  const { calls, lines } = await run([
    { kind: 'lock-expiry', event: 'evt_1', delivery: 1, point: 'before-handler' },
  ]);
  expect(lines).toEqual([
    't=    0ms deliver evt_1 attempt 1 · lease taken · lock expires mid-handler (before-handler)',
    't=30000ms deliver evt_1 attempt 2 · lease taken · handler ran · completed · acked',
    't=30000ms resume evt_1 attempt 1 · lock lost · handler ran · complete ignored: lease lost · ack refused: lock lost',
  ]);
  expect(calls).toEqual([
    { id: 'evt_1', attempt: 2, aborted: false },
    { id: 'evt_1', attempt: 1, aborted: true },
  ]);
});

test('a duplicate while the first copy runs is busy, then acked as a duplicate', async () => {
  const { calls, lines } = await run([
    { kind: 'duplicate', event: 'evt_1', afterMs: 0 },
    { kind: 'lock-expiry', event: 'evt_1', delivery: 1, point: 'after-handler' },
  ]);
  expect(lines[1]).toBe(
    't=    0ms deliver evt_1 attempt 1 (duplicate) · busy: another attempt holds the lease · retry in 30000ms',
  );
  expect(calls.map((c) => c.attempt)).toEqual([1, 2]);
});

test('a delay reorders events of one key', async () => {
  const { calls } = await run([{ kind: 'delay', event: 'evt_1', ms: 250 }], payments);
  expect(calls.map((c) => c.id)).toEqual(['evt_2', 'evt_3', 'evt_1']);
});

test('a broker outage holds deliveries until it ends; a store outage fails them into backoff', async () => {
  const broker = await run([{ kind: 'broker-outage', atMs: 0, forMs: 5_000 }]);
  expect(broker.lines).toEqual([
    't=   0ms broker down for 5000ms',
    't=5000ms broker up',
    't=5000ms deliver evt_1 attempt 1 · lease taken · handler ran · completed · acked',
  ]);
  const store = await run([{ kind: 'store-outage', atMs: 0, forMs: 500 }]);
  expect(store.lines[1]).toMatch(
    /^t=\s*0ms deliver evt_1 attempt 1 · begin failed: store down · retry in \d+ms$/,
  );
  expect(store.result.states.get('evt_1')).toBe('completed');
});
