import { type Delivery, LockLostError, type RenewableDelivery } from '@onceflow/core';
import { describe, expect, it } from 'vitest';
import { createEmbedded } from '../src/index.js';
import { deferred, event, tempDbPath, waitFor } from './helpers.js';

const fast = { pollIntervalMs: 20 };

describe('embedded transport', () => {
  it('declares what it keeps', () => {
    const embedded = createEmbedded({ path: tempDbPath(), dedupeWindowMs: 3_600_000 });
    const { capabilities } = embedded.transport('q');
    expect(capabilities).toMatchObject({
      brokerDedupe: { windowMs: 3_600_000 },
      orderingPerKey: true,
      lock: { scope: 'message', ms: 30_000 },
      deliveryLimit: false,
    });
    expect(capabilities.durability).toMatch(/synchronous=FULL/);
  });

  it('dedupes a key while queued and for the window after ack, then forgets it', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), ...fast, dedupeWindowMs: 200 });
    const transport = embedded.transport('q');
    const seen: string[] = [];
    const sub = await transport.consume(
      async (d) => {
        seen.push(d.envelope.id);
        await d.ack();
      },
      { concurrency: 2 },
    );
    await transport.publish([{ envelope: event('a') }, { envelope: event('a') }]);
    await waitFor(() => seen.length === 1);
    await transport.publish([{ envelope: event('a') }, { envelope: event('b') }]);
    await waitFor(() => seen.length === 2);
    expect(seen).toEqual(['a', 'b']);

    await new Promise((r) => setTimeout(r, 250));
    await transport.start(); // sweeps tombstones older than the window
    await transport.publish([{ envelope: event('a') }]);
    await waitFor(() => seen.length === 3);
    await sub.close();
  });

  it('hands out one message per key at a time, in publish order, across retries', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), ...fast });
    const transport = embedded.transport('q');
    const order: Record<string, string[]> = { k1: [], k2: [] };
    const active = new Set<string>();
    let overlap = false;
    let retried = false;
    const sub = await transport.consume(
      async (d) => {
        const key = d.envelope.key!;
        if (active.has(key)) overlap = true;
        active.add(key);
        await new Promise((r) => setTimeout(r, 5));
        active.delete(key);
        if (d.envelope.id === 'k1-0' && !retried) {
          retried = true;
          await d.retry({ delayMs: 100 });
          return;
        }
        order[key]!.push(d.envelope.id);
        await d.ack();
      },
      { concurrency: 4 },
    );
    const messages = [0, 1, 2, 3].flatMap((i) => [
      { envelope: event(`k1-${i}`, { key: 'k1' }) },
      { envelope: event(`k2-${i}`, { key: 'k2' }) },
    ]);
    await transport.publish(messages);
    await waitFor(() => order.k1!.length === 4 && order.k2!.length === 4);
    expect(overlap).toBe(false);
    expect(order.k1).toEqual(['k1-0', 'k1-1', 'k1-2', 'k1-3']);
    expect(order.k2).toEqual(['k2-0', 'k2-1', 'k2-2', 'k2-3']);
    await sub.close();
  });

  it('redelivers after lock expiry with attempt + 1 and aborts the first holder', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), ...fast });
    const transport = embedded.transport('q', { lockMs: 200 });
    const first = deferred<Delivery>();
    const second = deferred<Delivery>();
    const sub = await transport.consume(
      async (d) => {
        if (d.attempt === 1) {
          first.resolve(d);
          await new Promise((r) => d.signal.addEventListener('abort', r));
          await waitFor(() => secondSeen);
          await expect(d.ack()).rejects.toBeInstanceOf(LockLostError);
          return;
        }
        second.resolve(d);
        await d.ack();
      },
      { concurrency: 2 },
    );
    let secondSeen = false;
    const started = Date.now();
    await transport.publish([{ envelope: event('slow') }]);
    const d1 = await first.promise;
    const d2 = await second.promise;
    secondSeen = true;
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    // the first holder's timer and the redelivering poll both act at the lease's end, in either order
    await waitFor(() => d1.signal.aborted);
    expect(d1.signal.reason).toBeInstanceOf(LockLostError);
    expect(d2.attempt).toBe(2);
    await expect((d1 as RenewableDelivery).renewLock()).rejects.toBeInstanceOf(LockLostError);
    await sub.close();
  });

  it('keeps the message while renewLock renews the lease', async () => {
    // A run is judged only when each renewal, and the ack, came while the lease it renewed was
    // surely held: a stall of the machine between two of them may rightly have let the lease go
    // (to the rival, or back to this consumer). Such a run is run again, on a fresh file.
    const lockMs = 250;
    for (let run = 1; ; run++) {
      const path = tempDbPath();
      await using embedded = createEmbedded({ path, ...fast });
      await using rival = createEmbedded({ path, ...fast });
      const transport = embedded.transport('q', { lockMs });
      const attempts: number[] = [];
      const rivalSaw: string[] = [];
      const rivalSub = await rival
        .transport('q')
        .consume(async (d) => void rivalSaw.push(d.envelope.id), { concurrency: 1 });
      let since = 0; // when the lease was last taken or renewed, at the earliest
      let inTime = true;
      const heldAt = () => {
        const at = Date.now();
        inTime &&= at - since < lockMs * 0.75;
        return at;
      };
      const done = deferred<{ aborted: boolean; error?: unknown }>();
      const sub = await transport.consume(
        async (d) => {
          attempts.push(d.attempt);
          try {
            // Runs 4 × 100 ms, longer than the 250 ms lease it started with.
            for (let i = 0; i < 4; i++) {
              const at = heldAt();
              await (d as RenewableDelivery).renewLock();
              since = at;
              await new Promise((r) => setTimeout(r, 100));
            }
            const aborted = d.signal.aborted; // when it settles, as a handler would read it
            heldAt();
            await d.ack();
            done.resolve({ aborted });
          } catch (error) {
            done.resolve({ aborted: d.signal.aborted, error });
          }
        },
        { concurrency: 1 },
      );
      since = Date.now();
      await transport.publish([{ envelope: event('long') }]);
      const seen = await done.promise;
      await sub.close();
      await rivalSub.close();
      if (!inTime && run < 5) continue;
      expect(inTime, 'a run whose renewals and ack all came in time').toBe(true);
      expect(seen).toEqual({ aborted: false });
      expect(attempts).toEqual([1]);
      expect(rivalSaw).toEqual([]);
      return;
    }
  });

  it('keeps queued messages across a reopen, a message another connection was handling included', async () => {
    const path = tempDbPath();
    const first = createEmbedded({ path, ...fast });
    const q1 = first.transport('q', { lockMs: 300 });
    await q1.publish([{ envelope: event('interrupted') }]);
    const held = deferred();
    const sub = await q1.consume(
      async () => {
        held.resolve(); // never settles: the process "stops" while it holds the lease
        await new Promise(() => {});
      },
      { concurrency: 1 },
    );
    await held.promise;
    await q1.publish([{ envelope: event('waiting') }]);
    void sub.close();
    first.db.close();

    await using second = createEmbedded({ path, ...fast });
    const got: [string, number][] = [];
    const sub2 = await second.transport('q').consume(
      async (d) => {
        got.push([d.envelope.id, d.attempt]);
        await d.ack();
      },
      { concurrency: 1 },
    );
    await waitFor(() => got.length === 2, 5000);
    expect(got).toEqual(
      expect.arrayContaining([
        ['waiting', 1],
        ['interrupted', 2],
      ]),
    );
    await sub2.close();
  });

  it('close waits for the handler in flight and records its settlement', async () => {
    const path = tempDbPath();
    await using embedded = createEmbedded({ path, ...fast });
    const transport = embedded.transport('q');
    const entered = deferred();
    let acked = false;
    const sub = await transport.consume(
      async (d) => {
        entered.resolve();
        await new Promise((r) => setTimeout(r, 150));
        await d.ack();
        acked = true;
      },
      { concurrency: 1 },
    );
    await transport.publish([{ envelope: event('x') }]);
    await entered.promise;
    await sub.close();
    expect(acked).toBe(true);
    const row = embedded.db.prepare(`SELECT state FROM onceflow_messages`).get();
    expect(row).toEqual({ state: 'done' });
  });

  it('retries no earlier than the delay asked for', async () => {
    await using embedded = createEmbedded({ path: tempDbPath(), ...fast });
    const transport = embedded.transport('q');
    const times: number[] = [];
    const sub = await transport.consume(
      async (d) => {
        times.push(Date.now());
        if (d.attempt === 1) await d.retry({ delayMs: 300 });
        else await d.ack();
      },
      { concurrency: 1 },
    );
    await transport.publish([{ envelope: event('later') }]);
    await waitFor(() => times.length === 2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(295);
    await sub.close();
  });
});
