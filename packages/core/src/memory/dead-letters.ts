import type { DeadLetter, DeadLetters } from '../contracts/transport.js';
import type { MemoryQueue, StoredDeadLetter } from './queue.js';
import { loadEnvelope } from './stored-envelope.js';

const toDeadLetter = (letter: StoredDeadLetter): DeadLetter => ({
  ...letter,
  envelope: loadEnvelope(letter.envelope),
});

/**
 * The dead-letter API over a memory queue. Every call is atomic; `redrive` re-enqueues with
 * attempt 1 (bypassing dedupe) and removes the letters; ids that are not stored are ignored.
 */
export function memoryDeadLetters(queue: () => MemoryQueue): DeadLetters {
  const pick = (ids: readonly string[] | undefined): StoredDeadLetter[] => {
    const store = queue().deadLetters;
    if (ids === undefined) return [...store.values()];
    return [...new Set(ids)].flatMap((id) => store.get(id) ?? []);
  };
  return {
    async list(options = {}) {
      const all = [...queue().deadLetters.values()];
      const limit = options.limit ?? all.length;
      return all.slice(0, Math.max(0, limit)).map(toDeadLetter);
    },
    async get(id) {
      const letter = queue().deadLetters.get(id);
      return letter && toDeadLetter(letter);
    },
    async redrive(ids) {
      const letters = pick(ids);
      for (const letter of letters) queue().deadLetters.delete(letter.id);
      queue().redrive(letters);
      return letters.length;
    },
    async purge(ids) {
      const letters = pick(ids);
      for (const letter of letters) queue().deadLetters.delete(letter.id);
      return letters.length;
    },
    async count() {
      return queue().deadLetters.size;
    },
  };
}
