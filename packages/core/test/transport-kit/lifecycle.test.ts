import { describe, expect, it } from 'vitest';
import { TransportUnavailableError } from '../../src/errors.js';
import { createLifecycle } from '../../src/kit.js';

describe('createLifecycle', () => {
  it('runs the set-up once for concurrent and later callers, and again after a failure', async () => {
    let runs = 0;
    let fail = true;
    const lifecycle = createLifecycle({
      name: 'test transport q',
      start: async () => {
        runs++;
        if (fail) throw new Error('broker down');
        return runs;
      },
      close: async () => {},
    });
    await expect(Promise.all([lifecycle.start(), lifecycle.start('publish')])).rejects.toThrow(
      'broker down',
    );
    expect(runs).toBe(1);
    fail = false;
    expect(await Promise.all([lifecycle.start(), lifecycle.start('publish')])).toEqual([2, 2]);
    expect(await lifecycle.start('consume')).toBe(2);
    expect(runs).toBe(2);
  });

  it('closes once, after a set-up under way, with its result; then refuses every operation', async () => {
    let release: (value: string) => void = () => {};
    const closedWith: (string | undefined)[] = [];
    const lifecycle = createLifecycle({
      name: 'test transport q',
      start: () => new Promise<string>((resolve) => (release = resolve)),
      close: async (started) => void closedWith.push(started),
    });
    const starting = lifecycle.start();
    const closing = lifecycle.close();
    expect(lifecycle.close()).toBe(closing);
    expect(lifecycle.closed).toBe(true);
    release('connection');
    await Promise.all([starting, closing, lifecycle.close()]);
    expect(closedWith).toEqual(['connection']);

    await expect(lifecycle.start('publish')).rejects.toThrow(
      new TransportUnavailableError('test transport q: publish after close'),
    );
    expect(() => lifecycle.assertOpen('consume')).toThrow(TransportUnavailableError);
  });

  it('closes with undefined when the set-up never ran or failed', async () => {
    const closedWith: unknown[] = [];
    const never = createLifecycle({
      name: 'a',
      start: async () => 1,
      close: async (s) => void closedWith.push(s),
    });
    await never.close();
    const failed = createLifecycle({
      name: 'b',
      start: async () => {
        throw new Error('no');
      },
      close: async (s) => void closedWith.push(s),
    });
    await failed.start().catch(() => {});
    await failed.close();
    expect(closedWith).toEqual([undefined, undefined]);
  });
});
