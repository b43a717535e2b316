// Redis: a redis-server of the test's own (AOF, own port and data dir), killed and restarted at will
export { type RedisServer, type RedisServerOptions, startRedisServer } from './redis.js';
