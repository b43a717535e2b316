import type { BacklogProbe, BacklogReading, Transport } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { waitUntil } from '../../wait.js';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

/** Whether a transport implements `BacklogProbe` (the suite runs these scenarios only then). */
export const hasBacklog = (t: Transport): t is Transport & BacklogProbe =>
  typeof (t as Partial<BacklogProbe>).backlog === 'function';

const probeOf = (t: Transport): BacklogProbe => {
  if (!hasBacklog(t)) throw new TypeError(`the ${t.name} transport has no backlog()`);
  return t;
};

const show = (r: BacklogReading | undefined) => JSON.stringify(r);

/** Reads until `ok` holds; fails with the last reading. */
async function readUntil(
  probe: BacklogProbe,
  ok: (r: BacklogReading) => boolean,
  what: string,
  timeoutMs: number,
): Promise<BacklogReading> {
  let last: BacklogReading | undefined;
  return waitUntil(
    async () => {
      last = await probe.backlog();
      return ok(last) && last;
    },
    { timeoutMs, intervalMs: 100, message: () => `${what}; last reading ${show(last)}` },
  );
}

/** Every partition's lag adds up to `ready`, and the reading names a queue. */
function consistent(r: BacklogReading): void {
  expect(r.queue, 'the reading names the queue').toMatch(/\S/);
  if (r.lag)
    expect(
      r.lag.reduce((n, p) => n + p.lag, 0),
      'lag per partition sums to ready',
    ).toBe(r.ready);
}

const countsWaitingAndHeld: TransportScenario = {
  name: 'reports its backlog: published messages as ready, a held delivery in flight where the broker tells, and an empty queue once all are acked',
  proves: [],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const probe = probeOf(fx.transport);
    const events = [testEnvelope(), testEnvelope(), testEnvelope()];
    await fx.publish(...events);
    const waiting = await readUntil(
      probe,
      (r) => r.ready === 3 && !r.delayed && !r.inFlight,
      'three published messages to read as ready',
      t.deliveryMs,
    );
    consistent(waiting);

    const hold = fx.gate();
    const [held] = events;
    const spy = createHandlerSpy(
      async (d) => {
        if (d.envelope.id === held?.id) await hold.opened;
        return d.ack();
      },
      { timeoutMs: t.deliveryMs * 2 },
    );
    await fx.consume(spy.handler(), { concurrency: 3 });
    for (const e of events) await spy.waitFor(e.id, 'received');
    if (waiting.inFlight !== undefined) {
      await readUntil(
        probe,
        (r) => (r.inFlight ?? 0) >= 1,
        'the held delivery to read as in flight',
        t.deliveryMs,
      );
    }
    hold.open();
    for (const e of events) await spy.waitFor(e.id, 'processed');
    const drained = await readUntil(
      probe,
      (r) => r.ready === 0 && !r.delayed && !r.inFlight,
      'the queue to read empty once every message is acked',
      t.deliveryMs,
    );
    consistent(drained);
  },
};

const countsRetryNotReady: TransportScenario = {
  name: 'reports a message retried with a long delay as not ready while it waits (delayed, or in flight where the broker holds it so)',
  proves: [],
  async run({ fixture, t, caps }) {
    await using fx = await fixture();
    const probe = probeOf(fx.transport);
    const event = testEnvelope();
    const delayMs = Math.min(caps.maxDelayMs, 60_000);
    const spy = createHandlerSpy((d) => d.retry({ delayMs }), {
      timeoutMs: t.deliveryMs,
    });
    await fx.consume(spy.handler(), { concurrency: 1 });
    await fx.publish(event);
    await spy.waitFor(event.id, 'returned');
    const r = await readUntil(
      probe,
      (b) => b.ready === 0 && (b.delayed ?? 0) + (b.inFlight ?? 0) === 1,
      'the retried message to wait as delayed (or in flight), not ready',
      t.deliveryMs,
    );
    consistent(r);
  },
};

/**
 * Scenarios for a transport with `BacklogProbe`. The retry scenario needs a delay the suite can
 * read within: it runs where the transport declares a `maxDelayMs` of a minute or more.
 */
export const backlogScenarios: ScenarioGroup = (caps) => [
  countsWaitingAndHeld,
  ...(caps.maxDelayMs >= 60_000 ? [countsRetryNotReady] : []),
];
