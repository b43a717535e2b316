import { describeStoreConformance } from '@onceflow/conformance';
import { afterAll } from 'vitest';
import { createRedisInbox, type RedisInbox } from '../src/index.js';
import { connect, deleteKeys, randomPrefix } from './helpers.js';

const redis = connect();

afterAll(async () => {
  await redis.quit();
});

describeStoreConformance<RedisInbox>('redis', {
  createStore: async () => createRedisInbox({ redis, prefix: randomPrefix() }),
  close: async (store) => {
    await deleteKeys(redis, store.keyBase);
  },
});
