import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired, deadLettered, enqueued } from '../steps.js';

/** Operators read in the history why a dead letter left the dead letters. */
export const historyNoteScenarios: StoreScenario[] = [
  {
    name: "history names 'receiver' as the actor of the claim and of markEnqueued",
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      await enqueued(store, env, longLeaseMs);
      expect((await record(env)).history).toMatchObject([
        { state: 'received', actor: 'receiver' },
        { state: 'enqueued', actor: 'receiver' },
      ]);
    },
  },
  {
    name: "history notes 'redriven' and 'purged' for operator actions and 'redriven by <redrive>' for a redriven attempt",
    async run({ store, envelope, record, longLeaseMs }) {
      const redriven = envelope();
      await deadLettered(store, redriven);
      await store.act(redriven.source, redriven.id, { kind: 'redriven', actor: 'cli:alice' });
      expect((await record(redriven)).history.at(-1)).toMatchObject({
        state: 'enqueued',
        note: 'redriven',
      });
      const discarded = envelope();
      await deadLettered(store, discarded);
      await store.act(discarded.source, discarded.id, { kind: 'discarded', actor: 'cli:bob' });
      expect((await record(discarded)).history.at(-1)).toMatchObject({
        state: 'discarded',
        note: 'purged',
      });
      const direct = envelope();
      await deadLettered(store, direct);
      await acquired(store, direct, { leaseMs: longLeaseMs, redrive: 'cli:ops' });
      expect((await record(direct)).history.at(-1)).toMatchObject({
        state: 'processing',
        note: 'redriven by cli:ops',
      });
      const plain = envelope();
      await acquired(store, plain, { leaseMs: longLeaseMs, redrive: 'cli:ops' });
      const entry = (await record(plain)).history.at(-1);
      expect(entry?.state).toBe('processing');
      expect(entry?.note ?? undefined, 'no note when nothing was dead-lettered').toBe(undefined);
    },
  },
];
