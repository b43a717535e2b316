import type { Envelope } from '@onceflow/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired, claimed, completed, deadLettered, enqueued, retryScheduled } from '../steps.js';

/** Operators act on dead letters only, and every action is in the history with who did it. */
export const actionScenarios: StoreScenario[] = [
  {
    name: "act 'redriven' moves a dead letter to enqueued with the operator in its history",
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      await deadLettered(store, env);
      const acted = await store.act(env.source, env.id, { kind: 'redriven', actor: 'cli:alice' });
      expect(acted).toBe(true);
      const r = await record(env);
      expect(r.state).toBe('enqueued');
      expect(r.history.at(-1)).toMatchObject({ state: 'enqueued', actor: 'cli:alice' });
      await acquired(store, env, { leaseMs: longLeaseMs, attempt: 1, redrive: 'cli:ops' });
      expect(await record(env)).toMatchObject({ state: 'processing', attempts: 1 });
    },
  },
  {
    name: "act 'discarded' discards a dead letter; begin then answers processed",
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      await deadLettered(store, env, 'schema: amount must be a number');
      expect(await store.act(env.source, env.id, { kind: 'discarded', actor: 'cli:bob' })).toBe(
        true,
      );
      const r = await record(env);
      expect(r).toMatchObject({ state: 'discarded', reason: 'schema: amount must be a number' });
      expect(r.history.at(-1)).toMatchObject({ state: 'discarded', actor: 'cli:bob' });
      expect(await store.begin(env, { leaseMs: longLeaseMs, attempt: 1 })).toEqual({
        status: 'processed',
      });
      expect(
        await store.begin(env, { leaseMs: longLeaseMs, attempt: 1, redrive: 'cli:ops' }),
      ).toEqual({
        status: 'processed',
      });
    },
  },
  {
    name: 'act on a record that is not dead-lettered returns false and changes nothing',
    async run({ store, envelope, longLeaseMs }) {
      const received = envelope();
      const queued = envelope();
      const processing = envelope();
      const retrying = envelope();
      const done = envelope();
      const discarded = envelope();
      const redriven = envelope();
      const claimToken = await claimed(store, received, longLeaseMs);
      await enqueued(store, queued, longLeaseMs);
      const lease = await acquired(store, processing, { leaseMs: longLeaseMs });
      await retryScheduled(store, retrying, longLeaseMs);
      await completed(store, done, longLeaseMs);
      await deadLettered(store, discarded);
      await store.act(discarded.source, discarded.id, { kind: 'discarded', actor: 'cli:a' });
      await deadLettered(store, redriven);
      await store.act(redriven.source, redriven.id, { kind: 'redriven', actor: 'cli:a' });

      const all: Envelope[] = [received, queued, processing, retrying, done, discarded, redriven];
      const before = await Promise.all(all.map((e) => store.get(e.source, e.id)));
      for (const env of all) {
        for (const kind of ['redriven', 'discarded'] as const) {
          expect(await store.act(env.source, env.id, { kind, actor: 'cli:eve' })).toBe(false);
        }
      }
      expect(await store.act(received.source, 'evt_absent', { kind: 'redriven', actor: 'x' })).toBe(
        false,
      );
      expect(await Promise.all(all.map((e) => store.get(e.source, e.id)))).toEqual(before);
      expect(await store.get(received.source, 'evt_absent')).toBe(undefined);
      await store.release(received.source, received.id, claimToken);
      await store.release(processing.source, processing.id, lease);
    },
  },
];
