import type { Envelope } from '@onceflow/core';
import { expect } from 'vitest';
import { testEnvelope } from '../../envelopes.js';
import { createHandlerSpy } from '../../spy.js';
import { sleep } from '../../wait.js';
import type { ScenarioGroup, TransportScenario } from '../scenario.js';

const KEYS = ['k-a', 'k-b', 'k-c'];
const PER_KEY = 6;

/** Interleaved keys: k-a#0, k-b#0, k-c#0, k-a#1, … in publish order. */
function interleaved(): Envelope[] {
  const out: Envelope[] = [];
  for (let i = 0; i < PER_KEY; i++) {
    for (const key of KEYS) out.push(testEnvelope({ key, payload: { key, i } }));
  }
  return out;
}

const limit: TransportScenario = {
  name: 'never runs more handlers at once than concurrency',
  proves: [],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const events = Array.from({ length: 20 }, () => testEnvelope());
    const spy = createHandlerSpy(
      async (d) => {
        await sleep(15); // simulated work, so that deliveries overlap
        await d.ack();
      },
      { timeoutMs: t.deliveryMs * 2 },
    );
    await fx.consume(spy.handler(), { concurrency: 3 });
    await fx.publish(...events);
    await spy.waitForCount('processed', events.length);
    expect(spy.maxRunning).toBeLessThanOrEqual(3);
    expect(new Set(spy.of('processed').map((e) => e.id)).size).toBe(events.length);
  },
};

const ordered: TransportScenario = {
  name: 'hands one key’s messages to handlers one at a time and in publish order, a retry included',
  proves: ['orderingPerKey'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const events = interleaved();
    const retried = events[KEYS.length]; // k-a#1 fails once
    const running = new Map<string, number>();
    let overlap = 0;
    const spy = createHandlerSpy(
      async (d) => {
        const key = d.envelope.key ?? '';
        running.set(key, (running.get(key) ?? 0) + 1);
        if ((running.get(key) ?? 0) > 1) overlap++;
        await sleep(Math.floor(Math.random() * 8));
        running.set(key, (running.get(key) ?? 1) - 1);
        if (d.envelope.id === retried?.id && d.attempt === 1) return d.retry({ delayMs: 0 });
        await d.ack();
      },
      { timeoutMs: t.deliveryMs * 2 },
    );
    await fx.consume(spy.handler(), { concurrency: 4 });
    await fx.publish(...events.slice(0, 7));
    await fx.publish(...events.slice(7));
    await spy.waitForCount('processed', events.length);
    expect(overlap, 'two handlers of one key at once').toBe(0);
    for (const key of KEYS) {
      const sent = events.filter((e) => e.key === key).map((e) => e.id);
      const acked = spy
        .of('processed')
        .filter((e) => e.delivery.envelope.key === key)
        .map((e) => e.id);
      expect(acked, `ack order of key ${key}`).toEqual(sent);
      const firstSeen = [
        ...new Set(
          spy
            .of('received')
            .filter((e) => e.delivery.envelope.key === key)
            .map((e) => e.id),
        ),
      ];
      expect(firstSeen, `delivery order of key ${key}`).toEqual(sent);
    }
  },
};

const unordered: TransportScenario = {
  name: 'without per-key ordering, delivers every message of interleaved keys',
  proves: ['orderingPerKey'],
  async run({ fixture, t }) {
    await using fx = await fixture();
    const events = interleaved();
    const spy = createHandlerSpy(undefined, { timeoutMs: t.deliveryMs * 2 });
    await fx.consume(spy.handler(), { concurrency: 4 });
    await fx.publish(...events);
    for (const e of events) await spy.waitFor(e.id, 'processed');
    expect(new Set(spy.of('processed').map((e) => e.id))).toEqual(new Set(events.map((e) => e.id)));
  },
};

/** The concurrency limit, and per-key order when declared. */
export const concurrencyScenarios: ScenarioGroup = (caps) => [
  limit,
  caps.orderingPerKey ? ordered : unordered,
];
