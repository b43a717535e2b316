import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOnceflowError, ReviewError } from '../../src/errors.js';
import { defineTransitions } from '../../src/stale/transitions.js';
import { staleNote, toPosition } from '../../src/stale/position.js';
import { defineHandler } from '../../src/worker/index.js';
import { decideVerdict } from '../../src/worker/verdict.js';
import { event, fixture } from './fixture.js';

const order = defineTransitions({ pending: ['approved', 'rejected'], approved: ['shipped'] });

describe('defineTransitions', () => {
  it('allows the listed moves and staying put; anything else throws ReviewError', () => {
    expect(order.allows('pending', 'approved')).toBe(true);
    expect(order.allows('approved', 'approved')).toBe(true);
    expect(order.allows('approved', 'pending')).toBe(false);
    expect(order.allows('shipped', 'approved')).toBe(false); // final: no entry
    expect(() => order.check('approved', 'shipped')).not.toThrow();
    let thrown: unknown;
    try {
      order.check('shipped', 'pending');
    } catch (err) {
      thrown = err;
    }
    expect(isOnceflowError(thrown, 'REVIEW')).toBe(true);
    expect(thrown).toBeInstanceOf(ReviewError);
    expect(thrown).toMatchObject({
      code: 'REVIEW',
      from: 'shipped',
      to: 'pending',
      message: 'shipped → pending not allowed',
    });
  });

  it('a ReviewError is dead-lettered at once, reason review: <from> → <to> not allowed', () => {
    const policy = {
      attempt: 1,
      maxAttempts: 5,
      backoff: () => 1000,
      maxDelayMs: 60_000,
      interruptedByShutdown: false,
    };
    const verdict = decideVerdict(
      { error: new ReviewError('approved → pending not allowed') },
      policy,
    );
    expect(verdict).toMatchObject({
      action: 'dead-letter',
      code: 'REVIEW',
      reason: 'review: approved → pending not allowed',
    });
  });
});

describe('positions', () => {
  it('a version or (occurredAt, tieBreak); anything else is a UsageError', () => {
    expect(toPosition({ aggregate: 'order:1', version: 7 })).toEqual({
      aggregate: 'order:1',
      version: 7n,
      tie: '',
      kind: 'version',
    });
    const at = '2026-01-02T03:04:05.678Z';
    expect(toPosition({ aggregate: 'a', occurredAt: at, tieBreak: 'evt_2' })).toEqual({
      aggregate: 'a',
      version: BigInt(Date.parse(at)),
      tie: 'evt_2',
      kind: 'occurredAt',
    });
    for (const bad of [
      { aggregate: '', version: 1 },
      { aggregate: 'a', version: -1 },
      { aggregate: 'a', version: 1.5 },
      { aggregate: 'a', version: 2n ** 63n },
      { aggregate: 'a', occurredAt: 'not a date', tieBreak: 'x' },
      { aggregate: 'a', occurredAt: at },
      { aggregate: 'a' },
    ]) {
      expect(
        () => toPosition(bad as never),
        JSON.stringify(bad, (_k, v) => `${v}`),
      ).toThrow(expect.objectContaining({ code: 'USAGE' }));
    }
  });

  it('the stale note names both positions and the aggregate', () => {
    const p = toPosition({ aggregate: 'order:1', version: 5 });
    expect(staleNote(p, { version: 7n, tie: '' })).toBe(
      'stale: version 5 ≤ version 7 applied for order:1',
    );
    const q = toPosition({ aggregate: 'o', occurredAt: new Date(0), tieBreak: 'evt_a' });
    expect(staleNote(q, { version: 0n, tie: 'evt_b' })).toBe(
      'stale: occurredAt 1970-01-01T00:00:00.000Z (evt_a) ≤ occurredAt 1970-01-01T00:00:00.000Z (evt_b) applied for o',
    );
  });

  it('transitions: a random walk over allowed moves never throws, any other move always does', () => {
    const states = ['pending', 'approved', 'rejected', 'shipped'] as const;
    const allowed = new Set(['pending>approved', 'pending>rejected', 'approved>shipped']);
    fc.assert(
      fc.property(fc.constantFrom(...states), fc.constantFrom(...states), (from, to) => {
        const ok = from === to || allowed.has(`${from}>${to}`);
        if (ok) order.check(from, to);
        else expect(() => order.check(from, to)).toThrow(ReviewError);
      }),
    );
  });
});

describe('the worker and ctx.note', () => {
  it('a noted completion carries the note on its completed history entry', async () => {
    await using f = fixture();
    await f.worker({
      consumer: 'worker-a',
      handlers: [
        defineHandler({
          type: 'order.updated',
          async handle(_e, ctx) {
            ctx.note('stale: version 5 ≤ version 7 applied for order:1');
          },
        }),
      ],
    });
    const env = event('order.updated', {});
    await f.publish(env);
    const record = await f.recordIn(env.id, 'completed');
    expect(record.history.at(-1)).toMatchObject({
      state: 'completed',
      actor: 'worker-a',
      note: 'stale: version 5 ≤ version 7 applied for order:1',
    });
    await f.drained();
  });

  it('a ReviewError dead-letters at once, reason review: …, listed by reason', async () => {
    await using f = fixture();
    await f.worker({
      consumer: 'worker-a',
      handlers: [
        defineHandler({
          type: 'order.approved',
          async handle() {
            order.check('shipped', 'approved');
          },
        }),
      ],
    });
    const env = event('order.approved', {});
    await f.publish(env);
    const record = await f.recordIn(env.id, 'dead-lettered');
    expect(record).toMatchObject({
      attempts: 1,
      reason: 'review: shipped → approved not allowed',
      lastError: { code: 'REVIEW', name: 'ReviewError' },
    });
    const page = await f.store.list({ limit: 10, state: 'dead-lettered', reason: 'review' });
    expect(page.records.map((r) => r.id)).toEqual([env.id]);
    await f.drained();
  });
});
