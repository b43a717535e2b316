import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Delivery, RenewableDelivery } from '../../src/contracts/transport.js';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError, LockLostError, TransportUnavailableError } from '../../src/errors.js';
import { createMemoryBroker } from '../../src/memory/broker.js';
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
    const limited = createMemoryTransport({ broker, queue: 'q', deliveryLimit: 3 });
    await expect(limited.start()).rejects.toThrow(/deliveryLimit false; got true and 3/);
  });

  it('validates options, consume options and retry delays; declares lock.ms and deliveryLimit', async () => {
    expect(() => createMemoryTransport({ maxMessageBytes: 0 })).toThrow(ConfigError);
    expect(() => createMemoryTransport({ lockMs: 0 })).toThrow(ConfigError);
    expect(() => createMemoryTransport({ deliveryLimit: 0 })).toThrow(ConfigError);
    expect(createMemoryTransport().capabilities).toMatchObject({
      lock: { scope: 'message', ms: 30_000 },
      deliveryLimit: false,
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
    expect(t.broker.depth(`${t.queue}.dead-letters`)).toBe(0); // acked by the dead-letter consumer
  });

  it('renewLock holds a delivery for lockMs again from now: no redelivery while renewed', async () => {
    await using t = createMemoryTransport({ lockMs: 60 });
    const c = collect(1, async (d) => {
      expect('renewLock' in d).toBe(true);
      const renewable = d as RenewableDelivery;
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 30));
        await renewable.renewLock();
      }
      await d.ack();
    });
    await t.consume(c.handler, { concurrency: 2 });
    await t.publish([{ envelope: env('held') }]);
    const [held] = await c.all;
    await expect.poll(() => t.broker.depth(t.queue)).toBe(0);
    expect(c.seen).toHaveLength(1); // 150 ms, more than twice lockMs, and never redelivered
    expect(held?.signal.aborted).toBe(false);
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
    await expect((first as RenewableDelivery).renewLock()).rejects.toThrow(LockLostError);
  });
});
