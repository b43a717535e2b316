import { randomBytes } from 'node:crypto';

/** The shared Redis (keeps nothing on disk); `ONCEFLOW_REDIS_URL` overrides. */
export const redisUrl = (): string => process.env.ONCEFLOW_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ key prefix unique to this test run, so runs never see each other's keys. */
export const runPrefix = (): string => `onceflow-test-${randomBytes(3).toString('hex')}`;
