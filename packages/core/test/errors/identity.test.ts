import { describe, expect, it } from 'vitest';
import * as A from '../../src/errors.js';
import { createEnvelope, createWorker, defineHandler } from '../../src/index.js';
import { createMemoryStore, createMemoryTransport } from '../../src/testing.js';

/** A second copy of the module (another URL, another module instance), as a second installed core. */
const secondCopy: string = '../../src/errors.ts?copy=2';
const B = (await import(secondCopy)) as typeof A;

describe('error identity across two copies of core', () => {
  it('loads a distinct copy', () => {
    expect(B.OnceflowError).not.toBe(A.OnceflowError);
    expect(Object.getPrototypeOf(new B.LockLostError()) === A.LockLostError.prototype).toBe(false);
  });

  it("copy A's toOnceflowError keeps an error from copy B: code, message and fields", () => {
    const later = new B.RetryLaterError(250, 'rate limited');
    const err = A.toOnceflowError(later);
    expect(err).toBe(later);
    expect(err.code).toBe('RETRY_LATER');
    expect(err.message).toBe('rate limited');
    expect(A.isOnceflowError(err, 'RETRY_LATER') && err.delayMs).toBe(250);
    expect(A.errorInfo(new B.LockLostError('lease expired'))).toEqual({
      code: 'LOCK_LOST',
      name: 'LockLostError',
      message: 'lease expired',
    });
  });

  it("copy A's isOnceflowError checks the brand and the code", () => {
    const lost = new B.LockLostError();
    expect(A.isOnceflowError(lost)).toBe(true);
    expect(A.isOnceflowError(lost, 'LOCK_LOST')).toBe(true);
    expect(A.isOnceflowError(lost, 'STORE_UNAVAILABLE')).toBe(false);
    for (const look of [
      { code: 'LOCK_LOST', message: 'not branded' },
      Object.assign(new Error('x'), { code: 'LOCK_LOST' }),
      'LOCK_LOST',
      null,
      undefined,
    ]) {
      expect(A.isOnceflowError(look)).toBe(false);
    }
    expect(A.toOnceflowError({ code: 'LOCK_LOST' }).code).toBe('INTERNAL');
  });

  it("copy A's instanceof recognises copy B's errors by code", () => {
    const lost = new B.LockLostError();
    expect(lost instanceof A.LockLostError).toBe(true);
    expect(lost instanceof A.OnceflowError).toBe(true);
    expect(lost instanceof A.StoreUnavailableError).toBe(false);
    expect(new B.SchemaError('bad', [{ path: 'a', message: 'm' }]) instanceof A.SchemaError).toBe(
      true,
    );
    expect(new Error('plain') instanceof A.OnceflowError).toBe(false);
    expect(A.LockLostError.code).toBe('LOCK_LOST');
  });

  it('a class of your own deriving from these keeps ordinary instanceof', () => {
    class CardDeclined extends A.NonRetryableError {}
    expect(new CardDeclined('declined') instanceof CardDeclined).toBe(true);
    expect(new A.NonRetryableError('other') instanceof CardDeclined).toBe(false);
    expect(new CardDeclined('declined') instanceof A.NonRetryableError).toBe(true);
    expect(A.isOnceflowError(new CardDeclined('declined'), 'NON_RETRYABLE')).toBe(true);
  });

  it("a handler throwing copy B's errors steers copy A's worker", async () => {
    const transport = createMemoryTransport();
    const store = createMemoryStore();
    const attempts: number[] = [];
    const worker = createWorker({
      transport,
      records: store,
      handlers: [
        defineHandler({
          type: 'later',
          async handle(_e, ctx) {
            attempts.push(Date.now());
            if (ctx.attempt === 1) throw new B.RetryLaterError(60);
          },
        }),
        defineHandler({
          type: 'doomed',
          async handle() {
            throw new B.NonRetryableError('card declined');
          },
        }),
      ],
    });
    await worker.start();
    const envelope = (id: string, type: string) =>
      createEnvelope({ id, source: 'test', type, payload: {} });
    await transport.publish([
      { envelope: envelope('e1', 'later') },
      { envelope: envelope('e2', 'doomed') },
    ]);
    await expect.poll(() => store.isProcessed('test', 'e1')).toBe(true);
    await expect.poll(async () => (await store.get('test', 'e2'))?.state).toBe('dead-lettered');
    expect(await store.get('test', 'e2')).toMatchObject({
      reason: 'card declined',
      attempts: 1,
      lastError: { code: 'NON_RETRYABLE', name: 'NonRetryableError' },
    });
    expect(attempts).toHaveLength(2);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(59);
    await worker.close();
    await transport.close();
  });
});
