// The store: Inbox + ProcessedStore over one Redis key space
export { type RedisInbox, createRedisInbox } from './store.js';
export type { RedisClient, RedisInboxConfig } from './config.js';
