import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../src/index.js';
import { watchLock } from '../../src/kit.js';

describe('watchLock', () => {
  it('aborts its signal with LockLostError when the lock runs out', async () => {
    const lock = watchLock({ until: Date.now() + 30, describe: 'lease on q/evt_1' });
    expect(lock.signal.aborted).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as Error).message).toBe('lease on q/evt_1 lost: expired');
  });

  it('renew moves the deadline; dispose stops the timer', async () => {
    const lock = watchLock({ until: Date.now() + 30, describe: 'lock on q/evt_2' });
    lock.renew(Date.now() + 1_000);
    await new Promise((r) => setTimeout(r, 60));
    expect(lock.signal.aborted).toBe(false);
    lock.dispose();
  });

  it('assertHeld refuses once the deadline less the margin has passed, even before the timer', () => {
    const lock = watchLock({
      until: Date.now() + 500,
      describe: 'visibility of q/evt_3',
      marginMs: 1_000,
      expiredReason: 'the visibility timeout ran out',
    });
    expect(() => lock.assertHeld('ack')).toThrow(
      'ack refused: visibility of q/evt_3 lost: the visibility timeout ran out',
    );
    expect(lock.signal.aborted).toBe(true);
  });

  it('the first reason wins and a lost lock is not renewed', () => {
    const lock = watchLock({ until: Date.now() + 10_000, describe: 'lock on q/evt_4' });
    lock.lost('ack found it taken');
    lock.lost('later');
    lock.renew(Date.now() + 60_000);
    expect(() => lock.assertHeld('retry')).toThrow(
      'retry refused: lock on q/evt_4 lost: ack found it taken',
    );
    lock.dispose();
  });
});
