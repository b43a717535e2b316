import fc from 'fast-check';
import { expect, it } from 'vitest';
import { trackOffsets } from '../src/offsets.js';

/** Ascending offsets with gaps (compacted topics and transaction markers leave holes). */
const trackedOffsets = fc
  .array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 60 })
  .chain((steps) =>
    fc.integer({ min: 0, max: 1_000 }).map((start) => {
      let at = start;
      return steps.map((step) => (at += step));
    }),
  );

/** The offset a commit may move to: one past the longest settled prefix, or -1 for none. */
function modelNext(tracked: readonly number[], settled: ReadonlySet<number>): number {
  let next = -1;
  for (const offset of tracked) {
    if (!settled.has(offset)) break;
    next = offset + 1;
  }
  return next;
}

it('commits exactly past the longest settled prefix, whatever order records settle in, and never past an unsettled record', async () => {
  await fc.assert(
    fc.asyncProperty(
      trackedOffsets.chain((tracked) =>
        fc.tuple(
          fc.constant(tracked),
          fc.shuffledSubarray(tracked), // the records that settle, in the order they do
        ),
      ),
      async ([tracked, settling]) => {
        const commits: number[] = [];
        const offsets = trackOffsets(
          async (next) => {
            commits.push(next);
          },
          () => {
            throw new Error('no commit fails here');
          },
        );
        for (const offset of tracked) offsets.track(offset);
        const settled = new Set<number>();
        for (const offset of settling) {
          offsets.settle(offset);
          offsets.settle(offset); // a second settlement of one record changes nothing
          settled.add(offset);
          await offsets.commit();
          const expected = modelNext(tracked, settled);
          if (expected >= 0) expect(commits.at(-1)).toBe(expected);
          else expect(commits).toEqual([]);
          const unsettled = tracked.filter((o) => !settled.has(o));
          for (const next of commits)
            for (const o of unsettled) expect(next).toBeLessThanOrEqual(o);
        }
        expect(offsets.barrier).toBeUndefined();
      },
    ),
    { numRuns: 300 },
  );
});

it('keeps the offset before an abandoned record, and refuses settlements after it', async () => {
  const commits: number[] = [];
  const offsets = trackOffsets(
    async (next) => {
      commits.push(next);
    },
    () => {},
  );
  for (const offset of [10, 11, 12, 13]) offsets.track(offset);
  offsets.settle(10);
  offsets.abandon(11);
  expect(() => offsets.settle(12)).toThrow(/redelivered/);
  await offsets.commit();
  expect(commits).toEqual([11]);
  expect(offsets.barrier).toBe(11);
});
