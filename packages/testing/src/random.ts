import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * A seeded source of uniform [0, 1) numbers, shaped like `Math.random`: the worker's backoff
 * jitter and the simulation's own choices draw from it, so one seed gives one run.
 */
export function seededRandom(seed: number): () => number {
  const rng = xoroshiro128plus(seed | 0);
  return () => uniformFloat64(rng);
}
