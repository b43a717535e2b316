import type { Delivery } from '@onceflow/core';
import { createRedisInbox } from '@onceflow/inbox-redis';
import type { Redis } from 'ioredis';

/**
 * The side effect of the process tests, behind the worker's record guard (the Redis
 * `RecordStore`): `begin` a processing lease, raise the counter `<prefix>:effects:<id>`,
 * `complete`. The guard's job is that a redelivery of a completed event finds it `processed` and
 * leaves the effect alone, as the worker does before it runs a handler.
 */
export function guardedEffect(redis: Redis, prefix: string) {
  const records = createRedisInbox({ redis, prefix: `${prefix}:records` });
  const counter = (id: string) => `${prefix}:effects:${id}`;
  return {
    /** True when the effect happened now, false when an earlier attempt had completed it. */
    async apply(delivery: Delivery): Promise<boolean> {
      const { source, id } = delivery.envelope;
      const begun = await records.begin(delivery.envelope, {
        leaseMs: 30_000,
        attempt: delivery.attempt,
      });
      if (begun.status === 'processed') return false;
      if (begun.status !== 'acquired') throw new Error(`${id} is ${begun.status}`);
      await redis.incr(counter(id));
      await records.complete(source, id, begun.token);
      return true;
    },
    /** How often the effect of `id` happened. */
    async count(id: string): Promise<number> {
      return Number((await redis.get(counter(id))) ?? 0);
    },
  };
}
