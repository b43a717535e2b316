import { describe, expect, it } from 'vitest';
import { createDeadlineQueue } from '../../src/transport-kit/deadline-queue.js';

const never = () => new Promise<never>(() => {});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('createDeadlineQueue', () => {
  it('times each call out its own length after it started, whatever the others do', async () => {
    const deadlines = createDeadlineQueue(40, () => new Error('late'));
    const t0 = performance.now();
    const times: Record<string, number> = {};
    const watch = (name: string, p: Promise<unknown>) =>
      p.then(
        () => {
          times[name] = -1;
        },
        () => {
          times[name] = performance.now() - t0;
        },
      );
    const first = watch('first', deadlines.run(never));
    await sleep(20);
    const second = watch('second', deadlines.run(never));
    const answered = await deadlines.run(async () => 'in time');
    await Promise.all([first, second]);
    expect(answered).toBe('in time');
    expect(times.first).toBeGreaterThanOrEqual(39);
    expect(times.second).toBeGreaterThanOrEqual(59);
  });

  it('aborts the signal of a call that takes one, after rejecting it', async () => {
    const deadlines = createDeadlineQueue(10, () => new Error('late'));
    let signal: AbortSignal | undefined;
    const err = await deadlines
      .run((s) => {
        signal = s;
        return never();
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(signal?.aborted).toBe(true);
  });

  it('passes results, errors and synchronous throws through, and leaves no timer once none is pending', async () => {
    const before = timers();
    const deadlines = createDeadlineQueue(60_000, () => new Error('late'));
    const calls = Array.from({ length: 3_000 }, (_, i) => deadlines.run(async () => i));
    expect((await Promise.all(calls)).at(-1)).toBe(2_999);
    await expect(
      deadlines.run(() => {
        throw new RangeError('sync');
      }),
    ).rejects.toThrow(RangeError);
    await expect(deadlines.run(() => Promise.reject(new TypeError('async')))).rejects.toThrow(
      TypeError,
    );
    expect(timers()).toBe(before);
  });
});
