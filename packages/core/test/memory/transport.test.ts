import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Delivery } from '../../src/contracts/transport.js';
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
    await b.consume(c.handler, { concurrency: 2, lockMs: 1000 });
    expect((await c.all).map((d) => d.envelope.id).sort()).toEqual(['1', '2']);
    expect(broker.queues()).toEqual(['orders']); // a queue exists once a transport uses it
    await other.start();
    expect(broker.queues().sort()).toEqual(['orders', 'other']);
  });

  it('refuses a second opener of a queue that disagrees on ordering', async () => {
    const broker = createMemoryBroker();
    await createMemoryTransport({ broker, queue: 'q' }).start();
    const odd = createMemoryTransport({ broker, queue: 'q', orderingPerKey: false });
    await expect(odd.start()).rejects.toThrow(ConfigError);
  });

  it('validates options, consume options, retry delays and lock extensions', async () => {
    expect(() => createMemoryTransport({ maxMessageBytes: 0 })).toThrow(ConfigError);
    await using t = createMemoryTransport({ maxLockMs: 1000, maxDelayMs: 500 });
    await expect(t.consume(async () => {}, { concurrency: 0, lockMs: 100 })).rejects.toThrow(
      ConfigError,
    );
    await expect(t.consume(async () => {}, { concurrency: 1, lockMs: 2000 })).rejects.toThrow(
      ConfigError,
    );
    const errors: unknown[] = [];
    const c = collect(1, async (d) => {
      await d.retry({ delayMs: 501 }).catch((e: unknown) => errors.push(e));
      await d.extendLock(1001).catch((e: unknown) => errors.push(e));
      await d.ack();
    });
    await t.consume(c.handler, { concurrency: 1, lockMs: 100 });
    await t.publish([{ envelope: env('v') }]);
    await c.all;
    await t.close();
    expect(errors.map((e) => (e as Error).name)).toEqual(['RangeError', 'RangeError']);
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

  it('rejects publish and consume after close with TransportUnavailableError', async () => {
    const t = createMemoryTransport();
    await t.close();
    await t.close();
    await expect(t.publish([{ envelope: env('x') }])).rejects.toThrow(TransportUnavailableError);
    await expect(t.consume(async () => {}, { concurrency: 1, lockMs: 100 })).rejects.toThrow(
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
    await t.consume(c.handler, { concurrency: 1, lockMs: 1000 });
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
    await t.consume(c.handler, { concurrency: 1, lockMs: 1000 });
    const sent = env('copy');
    await t.publish([{ envelope: sent }]);
    const [, second] = await c.all;
    expect(Buffer.from(second?.envelope.payload ?? []).equals(Buffer.from(sent.payload))).toBe(
      true,
    );
  });

  it('keeps the last retry error on a dead letter whose reason names none, and redrive skips dedupe', async () => {
    await using t = createMemoryTransport();
    const error = { code: 'INTERNAL' as const, name: 'Error', message: 'db down' };
    const c = collect(2, async (d) => {
      if (d.attempt === 1) return d.retry({ delayMs: 0, error });
      return d.deadLetter({ reason: 'gave up' });
    });
    await t.consume(c.handler, { concurrency: 1, lockMs: 1000 });
    await t.publish([{ envelope: env('dl') }]);
    await c.all;
    await t.close();
    const [letter] = await t.deadLetters.list();
    expect(letter).toMatchObject({ reason: 'gave up', attempts: 2, lastError: error });
    await using again = createMemoryTransport({ broker: t.broker, queue: t.queue });
    expect(await again.deadLetters.redrive()).toBe(1);
    expect(t.broker.depth(t.queue)).toBe(1); // the dedupe key of `dl` was seen, yet it is back
  });

  it('aborts a lost delivery with LockLostError and rejects its extendLock', async () => {
    await using t = createMemoryTransport();
    const c = collect(2, async (d) => {
      if (d.attempt === 1)
        return new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve()));
      return d.ack();
    });
    await t.consume(c.handler, { concurrency: 2, lockMs: 50 });
    await t.publish([{ envelope: env('lost') }]);
    const [first, second] = await c.all;
    expect(second?.attempt).toBe(2);
    expect(first?.signal.reason).toBeInstanceOf(LockLostError);
    await expect(first?.extendLock(100)).rejects.toThrow(LockLostError);
  });
});
