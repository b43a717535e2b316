// The store: Inbox + RecordStore over one Redis key space
export { type RedisInbox, createRedisInbox } from './store.js';
export type { RedisClient, RedisInboxConfig } from './config.js';
