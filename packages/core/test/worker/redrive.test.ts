import { describe, expect, it } from 'vitest';
import { NonRetryableError, UsageError } from '../../src/errors.js';
import { discardDeadLetters, REDRIVE_HEADER, redriveDeadLetters } from '../../src/index.js';
import { defineHandler } from '../../src/worker/index.js';
import { event, fixture } from './fixture.js';

/** A worker whose handler dead-letters while `failing` is set, recording every run. */
async function refunds(f: ReturnType<typeof fixture>) {
  const state = {
    failing: true,
    runs: [] as { id: string; attempt: number; redrive: string | undefined }[],
  };
  await f.worker({
    consumer: 'worker-a',
    handlers: [
      defineHandler({
        type: 'refund',
        async handle(_e, ctx) {
          const { id, headers } = ctx.envelope;
          state.runs.push({ id, attempt: ctx.attempt, redrive: headers[REDRIVE_HEADER] });
          if (state.failing) throw new NonRetryableError('ledger rejected the refund');
        },
      }),
    ],
  });
  return state;
}

const key = (e: { id: string }) => ({ source: 'test', id: e.id });

describe('redrive and discard dead letters through the event record', () => {
  it('redrive: a dry run lists, apply publishes a copy the worker runs at attempt 1, recorded who did it', async () => {
    await using f = fixture();
    const handler = await refunds(f);
    const [a, b] = [event('refund', { n: 1 }), event('refund', { n: 2 })];
    await f.publish(a);
    await f.recordIn(a.id, 'dead-lettered');
    await f.publish(b);
    await f.recordIn(b.id, 'dead-lettered');
    await f.drained();
    const stores = { records: f.store, transport: f.transport };

    const dry = await redriveDeadLetters(stores, { actor: 'cli:alice' });
    expect(dry).toMatchObject({ dryRun: true, done: 0, skipped: [] });
    expect(dry.selected.map((r) => r.id)).toEqual([a.id, b.id]); // oldest first
    expect(f.transport.broker.depth(f.transport.queue)).toBe(0); // nothing published
    expect((await f.store.get('test', a.id))?.state).toBe('dead-lettered');

    handler.failing = false; // the cause is fixed
    const progress: [number, number][] = [];
    const applied = await redriveDeadLetters(stores, {
      ids: [key(a)],
      actor: 'cli:alice',
      apply: true,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(applied).toMatchObject({ dryRun: false, done: 1, skipped: [] });
    expect(progress).toEqual([[1, 1]]);

    const done = await f.recordIn(a.id, 'completed');
    await f.drained();
    expect(handler.runs.filter((r) => r.id === a.id)).toEqual([
      { id: a.id, attempt: 1, redrive: undefined },
      { id: a.id, attempt: 1, redrive: 'cli:alice' },
    ]);
    expect(done.attempts).toBe(1);
    // Who redrove it is in the history: the operator's act, or the worker's begin if it came first.
    const redriven = done.history.find(
      (h) =>
        (h.state === 'enqueued' && h.actor === 'cli:alice' && h.note === 'redriven') ||
        h.note === 'redriven by cli:alice',
    );
    expect(redriven).toBeDefined();
    expect(done.history.map((h) => h.state).slice(0, 3)).toEqual([
      'processing',
      'dead-lettered',
      redriven?.state,
    ]);
    expect(done.history.at(-1)).toMatchObject({ state: 'completed', attempt: 1 });
    expect((await f.store.get('test', b.id))?.state).toBe('dead-lettered'); // not selected

    // A second redrive of the completed event changes nothing and publishes nothing.
    const again = await redriveDeadLetters(stores, {
      ids: [key(a)],
      actor: 'cli:alice',
      apply: true,
    });
    expect(again).toMatchObject({ done: 0, selected: [], skipped: [key(a)] });
    expect(f.transport.broker.depth(f.transport.queue)).toBe(0);
    expect(await f.store.get('test', a.id)).toEqual(done);
    expect(handler.runs).toHaveLength(3);
  });

  it('redrive by filter and limit, oldest first; a redrive that fails again is a dead letter again', async () => {
    await using f = fixture();
    const handler = await refunds(f);
    const events = [event('refund', { n: 1 }), event('refund', { n: 2 }), event('refund', {})];
    for (const e of events) {
      await f.publish(e);
      await f.recordIn(e.id, 'dead-lettered');
    }
    await f.drained();
    const stores = { records: f.store, transport: f.transport };
    const applied = await redriveDeadLetters(stores, {
      filter: { type: 'refund', reason: 'ledger' },
      limit: 2,
      actor: 'cli:bob',
      apply: true,
    });
    expect(applied.selected.map((r) => r.id)).toEqual([events[0]?.id, events[1]?.id]);
    await f.drained();
    // Still failing: each copy ran once, at attempt 1, and is a dead letter again.
    expect(handler.runs.slice(3).map((r) => [r.attempt, r.redrive])).toEqual([
      [1, 'cli:bob'],
      [1, 'cli:bob'],
    ]);
    expect(await f.store.count({ state: 'dead-lettered' })).toBe(3);
    const record = await f.store.get('test', events[0]?.id ?? '');
    expect(record?.history.filter((h) => h.state === 'dead-lettered')).toHaveLength(2);
    expect(record?.envelope?.headers[REDRIVE_HEADER]).toBe('cli:bob');
  });

  it('discard: a dry run lists, apply discards with the actor; a later copy is acked unrun', async () => {
    await using f = fixture();
    const handler = await refunds(f);
    const env = event('refund', {});
    await f.publish(env);
    await f.recordIn(env.id, 'dead-lettered');
    await f.drained();

    const dry = await discardDeadLetters(f.store, { ids: [key(env)], actor: 'cli:carol' });
    expect(dry).toMatchObject({ dryRun: true, done: 0 });
    expect(dry.selected.map((r) => r.id)).toEqual([env.id]);
    expect((await f.store.get('test', env.id))?.state).toBe('dead-lettered');

    const applied = await discardDeadLetters(f.store, {
      ids: [key(env), { source: 'test', id: 'never-seen' }],
      actor: 'cli:carol',
      apply: true,
    });
    expect(applied).toMatchObject({ done: 1, skipped: [{ source: 'test', id: 'never-seen' }] });
    const record = await f.store.get('test', env.id);
    expect(record?.state).toBe('discarded');
    expect(record?.history.at(-1)).toMatchObject({ state: 'discarded', actor: 'cli:carol' });
    expect(await f.store.count({ state: 'dead-lettered' })).toBe(0);

    handler.failing = false;
    await f.transport.publish([{ envelope: env, dedupeKey: `${env.id}:late` }]);
    await f.drained();
    expect(handler.runs).toHaveLength(1);
    // Nothing to redrive any more.
    expect(
      await redriveDeadLetters(
        { records: f.store, transport: f.transport },
        { ids: [key(env)], actor: 'cli:carol', apply: true },
      ),
    ).toMatchObject({ done: 0, skipped: [key(env)] });
    await expect(
      discardDeadLetters(f.store, { ids: [], actor: 'cli:carol', apply: true }),
    ).rejects.toThrow(UsageError);
  });
});
