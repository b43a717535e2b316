import type { Redis } from 'ioredis';

/**
 * The side effect of the process tests, written with its processed mark atomically in one Lua
 * script (as a handler writes its business row and the processed mark in one transaction): the
 * counter `<prefix>:effects:<id>` is raised only if `<prefix>:processed:<id>` was not set yet.
 * Resolves true when the effect happened now, false when an earlier attempt had made it.
 */
export async function applyEffectOnce(redis: Redis, prefix: string, id: string): Promise<boolean> {
  const done = await redis.eval(
    `if redis.call('SET', KEYS[1], '1', 'NX') then redis.call('INCR', KEYS[2]) return 1 end return 0`,
    2,
    `${prefix}:processed:${id}`,
    `${prefix}:effects:${id}`,
  );
  return done === 1;
}

/** How often the effect of `id` happened. */
export async function effectCount(redis: Redis, prefix: string, id: string): Promise<number> {
  return Number((await redis.get(`${prefix}:effects:${id}`)) ?? 0);
}
