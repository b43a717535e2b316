import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Delivery, RenewableDelivery } from '../../src/contracts/transport.js';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError, LockLostError, TransportUnavailableError } from '../../src/errors.js';
import { type MemoryBroker, createMemoryBroker } from '../../src/memory/broker.js';
import { createMemoryTransport } from '../../src/memory/transport.js';
import { decodeEnvelope, encodeEnvelope } from '../../src/wire.js';

const env = (id: string, key?: string) =>
  createEnvelope({ id, source: 's', type: 't', key, payload: { id } });

/** Resolves with the first `n` deliveries a consumer is handed (each settled by `settle`). */
function collect(n: number, settle: (d: Delivery) => Promise<void> = (d) => d.ack()) {
  const seen: Delivery[] = [];
  let done!: (value: Delivery[]) => void;
  const all = new Promise<Delivery[]>((resolve) => {
    done = resolve;
  });
  const handler = async (d: Delivery) => {
    seen.push(d);
    if (seen.length === n) done(seen);
    await settle(d);
  };
  return { handler, all, seen };
}

describe('memory transport', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shares messages between transports on one broker and queue, not across queues', async () => {
    const broker = createMemoryBroker();
    await using a = createMemoryTransport({ broker, queue: 'orders' });
    await using b = createMemoryTransport({ broker, queue: 'orders' });
    await using other = createMemoryTransport({ broker, queue: 'other' });
    await a.publish([{ envelope: env('1') }, { envelope: env('2') }]);
    expect(broker.depth('orders')).toBe(2);
    expect(broker.depth('other')).toBe(0);
    const c = collect(2);
    await b.consume(c.handler, { concurrency: 2 });
    expect((await c.all).map((d) => d.envelope.id).sort()).toEqual(['1', '2']);
    expect(broker.queues()).toEqual(['orders']); // a queue exists once a transport uses it
    await other.start();
    expect(broker.queues().sort()).toEqual(['orders', 'other']);
  });

  it('refuses a second opener of a queue that disagrees on ordering or delivery limit', async () => {
    const broker = createMemoryBroker();
    await createMemoryTransport({ broker, queue: 'q' }).start();
    const odd = createMemoryTransport({ broker, queue: 'q', orderingPerKey: false });
    await expect(odd.start()).rejects.toThrow(ConfigError);
    await expect(
      createMemoryTransport({ broker, queue: 'q', dedupeWindowMs: 1000 }).start(),
    ).rejects.toThrow(/dedupeWindowMs 300000 and deliveryLimit false; got .*dedupeWindowMs 1000/);
    await createMemoryTransport({ broker, queue: 'limited', deliveryLimit: 3 }).start();
    await expect(
      createMemoryTransport({ broker, queue: 'limited', deliveryLimit: 4 }).start(),
    ).rejects.toThrow(/deliveryLimit 3; got .* deliveryLimit 4/);
    const limited = createMemoryTransport({ broker, queue: 'q', deliveryLimit: 3 });
    await expect(limited.start()).rejects.toThrow(
      /deliveryLimit false; got orderingPerKey true, dedupeWindowMs 300000 and deliveryLimit 3/,
    );
  });

  it('validates options, consume options and retry delays; declares lock.ms and deliveryLimit', async () => {
    expect(() => createMemoryTransport({ maxMessageBytes: 0 })).toThrow(ConfigError);
    expect(() => createMemoryTransport({ lockMs: 0 })).toThrow(ConfigError);
    expect(() => createMemoryTransport({ deliveryLimit: 0 })).toThrow(ConfigError);
    expect(createMemoryTransport().capabilities).toMatchObject({
      lock: { scope: 'message', ms: 30_000 },
      deliveryLimit: false,
      maxDelayMs: 7 * 24 * 60 * 60 * 1000,
      maxMessageBytes: 4 * 1024 * 1024,
      orderingPerKey: true,
      brokerDedupe: { windowMs: 300_000 },
    });
    await using t = createMemoryTransport({ lockMs: 1000, maxDelayMs: 500, deliveryLimit: 4 });
    expect(t.capabilities).toMatchObject({
      lock: { scope: 'message', ms: 1000 },
      deliveryLimit: 4,
    });
    await expect(t.consume(async () => {}, { concurrency: 0 })).rejects.toThrow(ConfigError);
    const errors: unknown[] = [];
    const c = collect(1, async (d) => {
      await d.retry({ delayMs: 501 }).catch((e: unknown) => errors.push(e));
      await d.ack();
    });
    await t.consume(c.handler, { concurrency: 1 });
    await t.publish([{ envelope: env('v') }]);
    await c.all;
    await t.close();
    expect(errors.map((e) => (e as Error).name)).toEqual(['RangeError']);
  });

  it('declares its dedupe window and drops a re-published key within it (Infinity: forever)', async () => {
    await using t = createMemoryTransport({ dedupeWindowMs: Infinity });
    expect(t.capabilities.brokerDedupe).toEqual({ windowMs: Infinity });
    await t.publish([{ envelope: env('d') }, { envelope: env('d') }]);
    await t.publish([{ envelope: env('d'), dedupeKey: 'd:replay' }]);
    expect(t.broker.depth(t.queue)).toBe(2);
    expect(createMemoryTransport({ dedupeWindowMs: false }).capabilities.brokerDedupe).toBe(false);
  });

  it('forgets a dedupe key once its window passed, then remembers it for a new window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await using t = createMemoryTransport({ dedupeWindowMs: 1000 });
    await t.publish([{ envelope: env('a') }, { envelope: env('b') }]);
    vi.advanceTimersByTime(999);
    await t.publish([{ envelope: env('a') }]);
    expect(t.broker.depth(t.queue)).toBe(2);
    vi.advanceTimersByTime(1);
    await t.publish([{ envelope: env('a') }, { envelope: env('b') }]);
    expect(t.broker.depth(t.queue)).toBe(4);
    vi.advanceTimersByTime(999);
    await t.publish([{ envelope: env('a') }, { envelope: env('b') }]);
    expect(t.broker.depth(t.queue)).toBe(4);
  });

  it('rejects publish, consume and consumeDeadLetters after close with TransportUnavailableError', async () => {
    const t = createMemoryTransport({ deliveryLimit: 2 });
    await t.close();
    await t.close();
    await expect(t.publish([{ envelope: env('x') }])).rejects.toThrow(TransportUnavailableError);
    await expect(t.consume(async () => {}, { concurrency: 1 })).rejects.toThrow(
      TransportUnavailableError,
    );
    await expect(t.consumeDeadLetters?.(async () => {}, { concurrency: 1 })).rejects.toThrow(
      TransportUnavailableError,
    );
    // The error names the transport and what was refused.
    await expect(t.publish([])).rejects.toThrow('memory transport default: publish after close');
    await expect(t.consume(async () => {}, { concurrency: 1 })).rejects.toThrow(
      'memory transport default: consume after close',
    );
    await expect(t.consumeDeadLetters?.(async () => {}, { concurrency: 1 })).rejects.toThrow(
      'memory transport default: consumeDeadLetters after close',
    );
    await expect(t.backlog()).rejects.toThrow('memory transport default: backlog after close');
  });

  it('closes with await using', async () => {
    let kept: ReturnType<typeof createMemoryTransport> | undefined;
    {
      await using t = createMemoryTransport({ queue: 'scoped' });
      kept = t;
    }
    await expect(kept.publish([])).rejects.toThrow('memory transport scoped: publish after close');
  });

  it('names its queue default unless told, and says where its messages live', () => {
    const t = createMemoryTransport();
    expect([t.queue, t.destination]).toEqual(['default', 'default']);
    expect(t.capabilities.durability).toBe('in process memory only: lost when the process exits');
  });

  it('refuses a broker not made by createMemoryBroker and a dedupe window that is not a positive number or false', () => {
    expect(() => createMemoryTransport({ broker: {} as MemoryBroker })).toThrow(
      /invalid memory transport options: .*must be made by createMemoryBroker\(\)/s,
    );
    for (const dedupeWindowMs of [0, -1, '5' as unknown as number, true as unknown as number]) {
      expect(() => createMemoryTransport({ dedupeWindowMs })).toThrow(ConfigError);
    }
    expect(createMemoryTransport({ dedupeWindowMs: 1 }).capabilities.brokerDedupe).toEqual({
      windowMs: 1,
    });
  });

  it('keeps every message of a batch when dedupe is off, and dedupes within a batch when on', async () => {
    await using off = createMemoryTransport({ dedupeWindowMs: false });
    await off.publish([{ envelope: env('d') }, { envelope: env('d') }]);
    expect(off.broker.depth(off.queue)).toBe(2);
    await using on = createMemoryTransport();
    await on.publish([{ envelope: env('d') }, { envelope: env('d') }]);
    expect(on.broker.depth(on.queue)).toBe(1);
  });

  it("without orderingPerKey hands one key's messages out together", async () => {
    await using t = createMemoryTransport({ orderingPerKey: false });
    const c = collect(2, async () => {});
    await t.consume(c.handler, { concurrency: 2 });
    await t.publish([{ envelope: env('1', 'k') }, { envelope: env('2', 'k') }]);
    expect((await c.all).map((d) => d.envelope.id)).toEqual(['1', '2']);
    for (const d of c.seen) await d.ack();
  });

  it('delivers what a wire round trip gives, byte for byte, unchanged by later writes to the published envelope', async () => {
    await using t = createMemoryTransport();
    const sent = createEnvelope({
      id: 'bytes',
      source: 's',
      type: 't',
      key: 'k',
      payload: Uint8Array.from({ length: 256 }, (_, i) => i),
      headers: { traceparent: '00-abc-def-01' },
      occurredAt: '2025-01-01T00:00:00.000Z',
    });
    const expected = decodeEnvelope(encodeEnvelope(sent));
    await t.publish([{ envelope: sent }]);
    sent.payload.fill(0);
    (sent.headers as Record<string, string>).traceparent = 'changed';
    const c = collect(1);
    await t.consume(c.handler, { concurrency: 1 });
    const [delivered] = await c.all;
    expect(delivered?.envelope).toEqual(expected);
  });

  it('hands each delivery its own copy of the payload', async () => {
    await using t = createMemoryTransport();
    const c = collect(2, async (d) => {
      if (d.attempt === 1) {
        d.envelope.payload.fill(0);
        return d.retry({ delayMs: 0 });
      }
      return d.ack();
    });
    await t.consume(c.handler, { concurrency: 1 });
    const sent = env('copy');
    await t.publish([{ envelope: sent }]);
    const [, second] = await c.all;
    expect(Buffer.from(second?.envelope.payload ?? []).equals(Buffer.from(sent.payload))).toBe(
      true,
    );
  });

  it('has no broker dead letters without a deliveryLimit', () => {
    expect('consumeDeadLetters' in createMemoryTransport()).toBe(false);
    expect('consumeDeadLetters' in createMemoryTransport({ deliveryLimit: false })).toBe(false);
    expect(createMemoryTransport({ deliveryLimit: false }).capabilities.deliveryLimit).toBe(false);
    expect('consumeDeadLetters' in createMemoryTransport({ deliveryLimit: 2 })).toBe(true);
  });

  it('moves a message delivered deliveryLimit times to consumeDeadLetters, with its delivery count', async () => {
    await using t = createMemoryTransport({ deliveryLimit: 3, lockMs: 40 });
    const attempts: number[] = [];
    // Retried twice, then never settled (its lock expires): three deliveries in all.
    await t.consume(
      async (d) => {
        attempts.push(d.attempt);
        if (d.attempt < 3) return d.retry({ delayMs: 0 });
        await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve()));
      },
      { concurrency: 2 },
    );
    await t.publish([{ envelope: env('dl', 'k') }, { envelope: env('after', 'k') }]);
    const dead = collect(1);
    await t.consumeDeadLetters?.(dead.handler, { concurrency: 1 });
    const [letter] = await dead.all;
    expect(letter?.envelope.id).toBe('dl');
    expect(letter?.attempt).toBe(3);
    expect(attempts.slice(0, 3)).toEqual([1, 2, 3]);
    // The next message of its key is delivered once the dead one left the queue.
    await expect.poll(() => t.broker.depth(t.queue)).toBe(0);
    // Acked by the dead-letter consumer: "after" is dead-lettered too (three deliveries, the last
    // never settled), and the poll above can see the main queue empty before that consumer,
    // started from setImmediate, took it.
    await expect.poll(() => t.broker.depth(`${t.queue}.dead-letters`)).toBe(0);
  });

  it("shares one queue's dead letters between the transports on it", async () => {
    const broker = createMemoryBroker();
    await using a = createMemoryTransport({ broker, queue: 'shared', deliveryLimit: 1 });
    await using b = createMemoryTransport({ broker, queue: 'shared', deliveryLimit: 1 });
    await a.consume((d) => d.retry({ delayMs: 0 }), { concurrency: 1 });
    await a.publish([{ envelope: env('dead') }]);
    const dead = collect(1);
    await b.consumeDeadLetters?.(dead.handler, { concurrency: 1 });
    expect((await dead.all).map((d) => [d.envelope.id, d.attempt])).toEqual([['dead', 1]]);
  });

  it("hands out one key's dead letters one at a time, as the queue orders its messages", async () => {
    await using t = createMemoryTransport({ deliveryLimit: 1 });
    await t.consume((d) => d.retry({ delayMs: 0 }), { concurrency: 2 });
    await t.publish([{ envelope: env('a', 'k') }, { envelope: env('b', 'k') }]);
    await expect.poll(() => t.broker.depth(`${t.queue}.dead-letters`)).toBe(2);
    const held: string[] = [];
    const gates: (() => void)[] = [];
    await t.consumeDeadLetters?.(
      async (d) => {
        held.push(d.envelope.id);
        await new Promise<void>((resolve) => gates.push(resolve));
        await d.ack();
      },
      { concurrency: 2 },
    );
    await expect.poll(() => held.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held).toEqual(['a']); // b waits for a's settlement
    gates[0]?.();
    await expect.poll(() => held).toEqual(['a', 'b']);
    gates[1]?.();
    await expect.poll(() => t.broker.depth(`${t.queue}.dead-letters`)).toBe(0);
  });

  it('renewLock holds a delivery for lockMs again from now: no redelivery while renewed', async () => {
    // A run is judged only when each renewal, and the ack, came while the lock was surely held
    // (within 0.75 × lockMs of the call before it, the first of the publish): a stall of the
    // machine between the delivery and the handler's start, or between two renewals, may rightly
    // let the lock go. Such a run is run again, on a fresh transport.
    for (let run = 1; ; run++) {
      await using t = createMemoryTransport({ lockMs: 200 });
      let since = 0; // when the lock was last taken or renewed, at the latest
      let inTime = true;
      const holding = (call: () => Promise<void>) => {
        const at = Date.now();
        inTime &&= at - since < 150;
        since = at;
        return call();
      };
      const c = collect(1, async (d) => {
        expect('renewLock' in d).toBe(true);
        const renewable = d as RenewableDelivery;
        for (let i = 0; i < 8; i++) {
          await new Promise((r) => setTimeout(r, 50));
          await holding(() => renewable.renewLock());
        }
        await holding(() => d.ack());
      });
      await t.consume(c.handler, { concurrency: 2 });
      since = Date.now();
      await t.publish([{ envelope: env('held') }]);
      const [held] = await c.all;
      await expect.poll(() => t.broker.depth(t.queue), { timeout: 10_000 }).toBe(0);
      if (!inTime && run < 5) continue;
      expect(inTime, 'a run whose renewals and ack all came in time').toBe(true);
      expect(c.seen).toHaveLength(1); // 400 ms, twice lockMs, and never redelivered
      expect(held?.signal.aborted).toBe(false);
      return;
    }
  });

  it('aborts a lost delivery with LockLostError and rejects its renewLock', async () => {
    await using t = createMemoryTransport({ lockMs: 50 });
    const c = collect(2, async (d) => {
      if (d.attempt === 1)
        return new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve()));
      return d.ack();
    });
    await t.consume(c.handler, { concurrency: 2 });
    await t.publish([{ envelope: env('lost') }]);
    const [first, second] = await c.all;
    expect(second?.attempt).toBe(2);
    expect(first?.signal.reason).toBeInstanceOf(LockLostError);
    await expect((first as RenewableDelivery).renewLock()).rejects.toThrow(
      'lock on event "lost" of queue "default" is no longer held',
    );
  });
});
