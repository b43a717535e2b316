import { NOTE_LIMIT } from '@onceflow/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../scenario.js';
import { acquired } from '../steps.js';

/** `complete` with a note: why the handler completed without its usual effect (a stale event). */
export const noteScenarios: StoreScenario[] = [
  {
    name: 'complete with a note keeps it on the completed history entry; without one, none',
    async run({ store, envelope, record, longLeaseMs }) {
      const noted = envelope();
      const plain = envelope();
      const token = await acquired(store, noted, { leaseMs: longLeaseMs, attempt: 1 });
      await store.complete(noted.source, noted.id, token, {
        note: 'stale: version 5 ≤ version 7 applied for order:1',
      });
      const plainToken = await acquired(store, plain, { leaseMs: longLeaseMs, attempt: 1 });
      await store.complete(plain.source, plain.id, plainToken);
      const r = await record(noted);
      expect(r.state).toBe('completed');
      expect(r.history.at(-1)).toMatchObject({
        state: 'completed',
        note: 'stale: version 5 ≤ version 7 applied for order:1',
      });
      const p = await record(plain);
      expect(p.history.at(-1)?.state).toBe('completed');
      expect(p.history.at(-1)?.note).toBe(undefined);
    },
  },
  {
    name: `a note longer than NOTE_LIMIT is cut to it, ending in …; a lost lease records no note`,
    async run({ store, envelope, record, longLeaseMs }) {
      const env = envelope();
      const token = await acquired(store, env, { leaseMs: longLeaseMs, attempt: 1 });
      await store.complete(env.source, env.id, `${token}-not-mine`, { note: 'not this one' });
      expect((await record(env)).state, 'a token that does not own the lease').toBe('processing');
      await store.complete(env.source, env.id, token, { note: 'x'.repeat(NOTE_LIMIT + 50) });
      const note = (await record(env)).history.at(-1)?.note ?? '';
      expect(note).toHaveLength(NOTE_LIMIT);
      expect(note.endsWith('…')).toBe(true);
      expect((await record(env)).history.some((h) => h.note === 'not this one')).toBe(false);
    },
  },
];
