import { NOW_MS } from './row.js';

/**
 * ProcessedStore.begin. KEYS: row, work lease. ARGV: token, lease ms, retention ms. Returns
 * `{'processed'}`, `{'acquired'}` or `{'busy', remaining ms}`. The lease is
 * `SET w:<member> token NX PX leaseMs`. An event no receiver claimed gets a guard-only row that
 * expires after the retention, so an attempt that dies leaves nothing behind for good.
 */
export const BEGIN = `${NOW_MS}
if redis.call('HGET', KEYS[1], 's') == 'd' then return {'processed'} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'wt', ARGV[1], 'ra', nowMs())
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  else
    redis.call('HSET', KEYS[1], 'wt', ARGV[1])
  end
  return {'acquired'}
end
return {'busy', redis.call('PTTL', KEYS[2])}
`;

/** ProcessedStore.extend. KEYS: row, work lease. ARGV: token, lease ms. Returns 1 or 0. */
export const EXTEND = `
local row = redis.call('HMGET', KEYS[1], 'wt', 's')
if row[1] ~= ARGV[1] or row[2] == 'd' then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
`;

/**
 * ProcessedStore.complete. KEYS: row, work lease, claim lease, pending, open, done. ARGV: member,
 * token, retention ms. Idempotent. A still-pending claim ends here too: the event is processed,
 * so the relay must not publish it again.
 */
export const COMPLETE = `${NOW_MS}
local row = redis.call('HMGET', KEYS[1], 'wt', 's', 'ra')
if row[1] ~= ARGV[2] or row[2] == 'd' then return 0 end
redis.call('HSET', KEYS[1], 's', 'd', 'pa', nowMs())
redis.call('HDEL', KEYS[1], 'wt', 'env', 't', 'ca')
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZADD', KEYS[6], row[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;
