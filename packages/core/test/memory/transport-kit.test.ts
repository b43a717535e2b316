import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/contracts/transport.js';
import { createEnvelope } from '../../src/envelope.js';
import { ConfigError, LockLostError, PayloadTooLargeError } from '../../src/errors.js';
import {
  DECODE_ERROR_HEADER,
  type DeliveryInit,
  ONCEFLOW_HEADERS,
  UNDECODABLE,
  createInFlight,
  createSettlement,
  deadLetterHeaders,
  decodeDelivery,
  encodeEnvelope,
  encodeWithinLimit,
  hashPayload,
  parseConsumeOptions,
  readDeadLetterHeaders,
  runDelivery,
  SETTLED,
} from '../../src/kit.js';

/** Broker operations that record what was called; `fail` names operations that reject. */
function recorder(fail: readonly string[] = []) {
  const calls: string[] = [];
  const op = (name: string) => async (arg?: unknown) => {
    calls.push(arg === undefined ? name : `${name}:${JSON.stringify(arg)}`);
    if (fail.includes(name)) throw new LockLostError(`${name} failed`);
  };
  return { calls, ack: op('ack'), retry: op('retry'), renewLock: op('renewLock') };
}

const init = (ops: ReturnType<typeof recorder>): DeliveryInit => ({
  envelope: createEnvelope({ id: 'e', source: 's', type: 't', payload: 'x' }),
  attempt: 1,
  signal: new AbortController().signal,
  ...ops,
});

describe('createSettlement', () => {
  it('records only the first settlement; later calls resolve once it is recorded', async () => {
    const ops = recorder();
    const s = createSettlement(ops);
    const first = s.ack();
    expect(s.outcome).toEqual({ kind: 'ack' });
    await Promise.all([first, s.retry({ delayMs: 5 }), s.ack()]);
    expect(ops.calls).toEqual(['ack']);
  });

  it('forgets a settlement whose recording failed, so the next call tries again', async () => {
    const ops = recorder(['ack']);
    const s = createSettlement(ops);
    await expect(s.ack()).rejects.toThrow(LockLostError);
    expect(s.outcome).toBeUndefined();
    await s.retry({ delayMs: 0 });
    expect(ops.calls).toEqual(['ack', 'retry:{"delayMs":0}']);
  });

  it('counts an ack answered with SETTLED as recorded at once, and still records it only once', async () => {
    let acks = 0;
    const s = createSettlement({
      ack: () => {
        acks++;
        return SETTLED;
      },
      retry: async () => {},
    });
    expect(s.ack()).toBe(SETTLED);
    expect(s.recorded).toBe(SETTLED);
    await Promise.all([s.ack(), s.retry({ delayMs: 5 })]);
    expect(acks).toBe(1);
    expect(s.outcome).toEqual({ kind: 'ack' });
  });
});

describe('runDelivery', () => {
  it('retries at once, with the error, a handler that throws', async () => {
    const ops = recorder();
    const outcome = await runDelivery(async () => {
      throw new TypeError('boom');
    }, init(ops));
    expect(outcome).toEqual({
      kind: 'retry',
      delayMs: 0,
      error: { code: 'INTERNAL', name: 'TypeError', message: 'boom' },
    });
    expect(ops.calls).toHaveLength(1);
  });

  it('retries at once a handler that returns without settling, and keeps a settlement made before a throw', async () => {
    const ops = recorder();
    expect(await runDelivery(async () => {}, init(ops))).toMatchObject({
      kind: 'retry',
      delayMs: 0,
    });
    const acked = recorder();
    const outcome = await runDelivery(async (d) => {
      void d.ack(); // not awaited: runDelivery still waits for it
      throw new Error('after ack');
    }, init(acked));
    expect(outcome).toEqual({ kind: 'ack' });
    expect(acked.calls).toEqual(['ack']);
  });

  it('hands the handler a RenewableDelivery only when the adapter can renew the lock', async () => {
    const ops = recorder();
    let renewable: boolean | undefined;
    await runDelivery(async (d) => {
      renewable = 'renewLock' in d;
      if ('renewLock' in d && typeof d.renewLock === 'function') await d.renewLock();
      await d.ack();
    }, init(ops));
    expect(renewable).toBe(true);
    expect(ops.calls).toEqual(['renewLock', 'ack']);

    const { renewLock: _, ...fixed } = recorder();
    await runDelivery(
      async (d) => {
        renewable = 'renewLock' in d;
        await d.ack();
      },
      { ...init(recorder()), ...fixed, renewLock: undefined },
    );
    expect(renewable).toBe(false);
  });

  it('falls back to one retry when the chosen settlement fails, and never rejects', async () => {
    const ops = recorder(['ack', 'retry']);
    const errors: unknown[] = [];
    const handler = async (d: Delivery) => {
      await d.ack().catch(() => {}); // the handler swallows the failure and returns
    };
    const outcome = await runDelivery(handler, init(ops), { onError: (e) => errors.push(e) });
    expect(outcome).toBeUndefined();
    expect(ops.calls).toEqual(['ack', 'retry:{"delayMs":0}']);
    expect(errors).toHaveLength(1);
  });
});

describe('createInFlight', () => {
  it('enforces the limit, wakes waiters when room frees, and drains', async () => {
    const inFlight = createInFlight(2);
    const gates: (() => void)[] = [];
    const task = () => new Promise<void>((resolve) => gates.push(resolve));
    void inFlight.run(task);
    void inFlight.run(task);
    expect(inFlight.hasRoom).toBe(false);
    expect(() => inFlight.run(task)).toThrow(RangeError);
    let roomy = false;
    const room = inFlight.whenRoom().then(() => {
      roomy = true;
    });
    let idle = false;
    const drained = inFlight.idle().then(() => {
      idle = true;
    });
    gates[0]?.();
    await room;
    expect([roomy, idle, inFlight.size]).toEqual([true, false, 1]);
    gates[1]?.();
    await drained;
    expect(inFlight.size).toBe(0);
    expect(() => createInFlight(0)).toThrow(RangeError);
  });
});

describe('headers, size and consume options', () => {
  it('round-trips dead-letter metadata through string headers', () => {
    const fields = {
      reason: 'attempts exhausted',
      attempts: 5,
      lastError: { code: 'INTERNAL' as const, name: 'Error', message: 'x' },
      deadLetteredAt: '2025-01-01T00:00:00.000Z',
    };
    const headers = deadLetterHeaders(fields);
    expect(headers[ONCEFLOW_HEADERS.deadLetterAttempts]).toBe('5');
    expect(readDeadLetterHeaders(headers, 'never')).toEqual(fields);
    expect(readDeadLetterHeaders({ [ONCEFLOW_HEADERS.deadLetterError]: '{bad' }, 'now')).toEqual({
      reason: 'unknown',
      attempts: 0,
      lastError: undefined,
      deadLetteredAt: 'now',
    });
  });

  it('refuses an envelope that encodes larger than the limit', () => {
    const envelope = createEnvelope({
      id: 'big',
      source: 's',
      type: 't',
      payload: 'x'.repeat(1000),
    });
    const body = encodeWithinLimit(envelope, 2000);
    expect(() => encodeWithinLimit(envelope, Buffer.byteLength(body) - 1)).toThrow(
      PayloadTooLargeError,
    );
  });

  it('validates consume options: concurrency only, a positive integer', () => {
    expect(parseConsumeOptions({ concurrency: 2 })).toEqual({ concurrency: 2 });
    expect(() => parseConsumeOptions({ concurrency: 1.5 })).toThrow(ConfigError);
    expect(() => parseConsumeOptions({ concurrency: 0 })).toThrow(ConfigError);
  });
});

describe('decodeDelivery', () => {
  it('decodes a wire-format envelope as decodeEnvelope does', () => {
    const envelope = createEnvelope({ id: 'e', source: 's', type: 't', payload: { a: 1 } });
    const decoded = decodeDelivery(encodeEnvelope(envelope));
    expect(decoded).toMatchObject({ id: 'e', source: 's', type: 't' });
    expect(decoded.payloadHash).toBe(envelope.payloadHash);
  });

  it('never throws: other bytes become an onceflow.undecodable envelope keeping the bytes', () => {
    const bytes = new Uint8Array([0xff, 0x00]);
    const a = decodeDelivery(bytes);
    expect(a).toMatchObject({ ...UNDECODABLE, id: hashPayload(bytes) });
    expect([...a.payload]).toEqual([0xff, 0x00]);
    expect(a.headers[DECODE_ERROR_HEADER]).toMatch(/./);
    // The id is the bytes' hash: the same bytes are one event, other bytes another.
    expect(decodeDelivery(new Uint8Array([0xff, 0x00])).id).toBe(a.id);
    expect(decodeDelivery('not an envelope').id).not.toBe(a.id);
    expect([...decodeDelivery('{}').payload]).toEqual([...new TextEncoder().encode('{}')]);
  });
});
