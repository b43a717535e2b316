import { describe, expect, it } from 'vitest';
import { createEnvelope, type Envelope } from '../../src/envelope.js';
import { type CrashHost, createCrashHost } from './crash-host.js';
import { waitFor } from './fixture.js';
import { APPEND, REJECT } from './fixtures/crash-worker.js';

/**
 * The broker's lock where nothing waits for one to run out (a killed worker's delivery comes back
 * as its process exits): long, as a delivery over IPC cannot renew its lock, and one that a
 * loaded machine kept unsettled past a short lock (its begin and its ack are round trips to a
 * freshly started process) would rightly be delivered again, a third time.
 */
const HELD_MS = 30_000;
/** The broker's lock, and so the lease, where another worker takes over once the lease ran out. */
const LOCK_MS = 500;

const events = (types: readonly string[]): Envelope[] =>
  types.map((type, i) => createEnvelope({ id: `evt_${i}`, source: 'crash', type, payload: { i } }));

/** How often each event's effect is in the ledger (a plain file: no unique key). */
function effects(host: CrashHost): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { id } of host.ledger()) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

async function settled(host: CrashHost, expected: { completed: number; deadLettered: number }) {
  await waitFor(
    async () =>
      (await host.store.count({ state: 'completed' })) === expected.completed &&
      (await host.store.count({ state: 'dead-lettered' })) === expected.deadLettered &&
      host.transport.broker.depth(host.transport.queue) === 0,
    { timeoutMs: 20_000, what: 'every event settled and acked' },
  );
}

describe('a worker SIGKILLed between the record write and the broker ack', () => {
  it('after complete is written: the broker redelivers, the record answers processed; lost 0, doubled 0', async () => {
    await using host = createCrashHost({ lockMs: HELD_MS });
    const sent = events(Array.from({ length: 10 }, () => APPEND));
    await host.transport.publish(sent.map((envelope) => ({ envelope })));

    const first = await host.spawn('worker-1', (method, _args, n) =>
      method === 'complete' && n === 4 ? 'after' : undefined,
    );
    await first.exited;
    const victim = String(first.killedOn()?.args[1]);
    expect((await host.store.get('crash', victim))?.state).toBe('completed');
    expect(host.transport.broker.depth(host.transport.queue)).toBeGreaterThan(0); // not acked

    const second = await host.spawn('worker-2');
    await settled(host, { completed: 10, deadLettered: 0 });
    await second.kill();

    const counts = effects(host);
    for (const e of sent) expect(counts.get(e.id), `effects of ${e.id}`).toBe(1);
    expect(host.deliveries.get(victim)).toEqual([1, 2]); // delivered again, not run again
    const record = await host.store.get('crash', victim);
    expect(record?.history.map((h) => [h.state, h.actor])).toEqual([
      ['processing', 'worker-1'],
      ['completed', 'worker-1'],
    ]);
  }, 60_000);

  it('after deadLetter is written: the broker redelivers, the record answers dead-lettered; lost 0, doubled 0', async () => {
    await using host = createCrashHost({ lockMs: HELD_MS });
    const sent = events(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? APPEND : REJECT)));
    await host.transport.publish(sent.map((envelope) => ({ envelope })));

    const first = await host.spawn('worker-1', (method, _args, n) =>
      method === 'deadLetter' && n === 2 ? 'after' : undefined,
    );
    await first.exited;
    const victim = (first.killedOn()?.args[0] as Envelope | undefined)?.id ?? '';
    expect((await host.store.get('crash', victim))?.state).toBe('dead-lettered');

    const second = await host.spawn('worker-2');
    await settled(host, { completed: 4, deadLettered: 4 });
    await second.kill();

    const counts = effects(host);
    for (const e of sent) expect(counts.get(e.id), `handler runs of ${e.id}`).toBe(1);
    expect(host.deliveries.get(victim)).toEqual([1, 2]);
    for (const e of sent.filter((s) => s.type === REJECT)) {
      const record = await host.store.get('crash', e.id);
      expect(record).toMatchObject({ state: 'dead-lettered', reason: 'the ledger rejected it' });
      expect(record?.history.filter((h) => h.state === 'dead-lettered')).toHaveLength(1);
      expect(record?.envelope?.id).toBe(e.id);
    }
    expect((await host.store.get('crash', victim))?.history.map((h) => [h.state, h.actor])).toEqual(
      [
        ['processing', 'worker-1'],
        ['dead-lettered', 'worker-1'],
      ],
    );
  }, 60_000);
});

describe('a worker SIGKILLed after the effect, before the record write', () => {
  it('runs the event again, with the same ctx.idempotencyKey: the effect keyed by it happens once', async () => {
    await using host = createCrashHost({ lockMs: LOCK_MS });
    const sent = events(Array.from({ length: 6 }, () => APPEND));
    await host.transport.publish(sent.map((envelope) => ({ envelope })));

    const first = await host.spawn('worker-1', (method, _args, n) =>
      method === 'complete' && n === 3 ? 'before' : undefined,
    );
    await first.exited;
    const victim = String(first.killedOn()?.args[1]);
    expect((await host.store.get('crash', victim))?.state).toBe('processing'); // never completed

    const second = await host.spawn('worker-2');
    await settled(host, { completed: 6, deadLettered: 0 });
    await second.kill();

    // Nothing is lost; the victim's effect was made twice. The record cannot close this window:
    // the handler's effect must be keyed by ctx.idempotencyKey (or written in one transaction
    // with the record, markProcessed), and both runs used the same key.
    const ledger = host.ledger();
    for (const e of sent.filter((s) => s.id !== victim)) {
      expect(
        ledger.filter((l) => l.id === e.id),
        `effects of ${e.id}`,
      ).toHaveLength(1);
    }
    const runs = ledger.filter((l) => l.id === victim);
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.key)).size).toBe(1);
    expect(new Set(ledger.map((l) => l.key)).size).toBe(sent.length); // keyed: once each
    const record = await host.store.get('crash', victim);
    expect(record?.history.map((h) => [h.state, h.actor])).toEqual([
      ['processing', 'worker-1'],
      ['processing', 'worker-2'],
      ['completed', 'worker-2'],
    ]);
  }, 60_000);
});
