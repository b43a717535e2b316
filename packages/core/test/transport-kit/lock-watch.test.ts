import { describe, expect, it } from 'vitest';
import { watchLock } from '../../src/transport-kit/lock-watch.js';

describe('watchLock', () => {
  it('answers isLost and calls onLost listeners without making its signal', () => {
    const lock = watchLock({ until: Date.now() + 60_000, describe: 'lock on q/evt_1' });
    const heard: string[] = [];
    lock.onLost(() => heard.push('first'));
    expect(lock.isLost()).toBe(false);
    lock.lost('renewLock found it taken');
    lock.lost('a second reason is ignored');
    expect(lock.isLost()).toBe(true);
    lock.onLost(() => heard.push('late'));
    expect(heard).toEqual(['first', 'late']);
    const signal = lock.signal;
    expect(signal.aborted, 'a signal made after the loss is aborted at once').toBe(true);
    expect((signal.reason as Error).message).toBe('lock on q/evt_1 lost: renewLock found it taken');
    expect(() => lock.assertHeld('ack')).toThrow(/ack refused: lock on q\/evt_1 lost/);
  });

  it('aborts a signal read before the loss, and counts an expired deadline lost', () => {
    const lock = watchLock({ until: Date.now() + 60_000, describe: 'lease' });
    const signal = lock.signal;
    expect(signal.aborted).toBe(false);
    lock.renew(Date.now() - 1);
    expect(() => lock.assertHeld('retry')).toThrow(/retry refused: lease lost: expired/);
    expect(signal.aborted).toBe(true);
    expect(lock.isLost()).toBe(true);
    lock.dispose();
  });
});
