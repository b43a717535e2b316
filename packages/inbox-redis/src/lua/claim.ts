import { NOW_MS } from './row.js';

/**
 * Inbox.claim. KEYS: row, claim lease, pending, open. ARGV: member, payload hash, token, lease
 * ms, encoded envelope, receivedAt ms. Returns `{status[, existing hash]}`.
 *
 * The lease is `SET c:<member> token NX PX leaseMs`: of any number of claims of one pending row,
 * only one finds the lease key gone and takes the claim over (`stale-pending`).
 */
export const CLAIM = `${NOW_MS}
local row = redis.call('HMGET', KEYS[1], 'h', 's')
local hash, state = row[1], row[2]
if hash then
  if hash ~= ARGV[2] then return {'conflict', hash} end
  if state ~= 'p' then return {'duplicate'} end
  if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then
    redis.call('HSET', KEYS[1], 't', ARGV[3])
    return {'stale-pending'}
  end
  return {'in-flight'}
end
if state == 'd' then return {'duplicate'} end
local now = nowMs()
redis.call('HSET', KEYS[1], 'h', ARGV[2], 's', 'p', 'env', ARGV[5], 't', ARGV[3], 'ca', now, 'ra', ARGV[6])
redis.call('PERSIST', KEYS[1])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[1])
return {'new'}
`;

/**
 * Inbox.markEnqueued. KEYS: row, claim lease, pending. ARGV: member, token, retention ms.
 * Idempotent; a token that does not own the pending claim changes nothing. From here the row
 * keeps only its hash and times, and expires after the retention.
 */
export const MARK_ENQUEUED = `
local row = redis.call('HMGET', KEYS[1], 's', 't')
if row[1] ~= 'p' or row[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 's', 'e')
redis.call('HDEL', KEYS[1], 'env', 't', 'ca')
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/**
 * Inbox.release and ProcessedStore.release: the token says which lease it gives up. KEYS: row,
 * claim lease, work lease, pending, open. ARGV: member, token, retention ms.
 *
 * A claim token drops the claim (the row goes, unless a worker's token is on it: then only the
 * claim's fields go), so the sender's retry is `new`. A processing token drops the processing
 * lease (a row the guard alone wrote goes with it), so the next delivery can `begin`.
 */
export const RELEASE = `
local row = redis.call('HMGET', KEYS[1], 's', 't', 'wt', 'h')
local state, claimToken, workToken, hash = row[1], row[2], row[3], row[4]
if state == 'p' and claimToken == ARGV[2] then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[5], ARGV[1])
  if workToken then
    redis.call('HDEL', KEYS[1], 'h', 's', 'env', 't', 'ca')
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  else
    redis.call('DEL', KEYS[1])
  end
  return 1
end
if workToken == ARGV[2] and state ~= 'd' then
  redis.call('DEL', KEYS[3])
  if hash then redis.call('HDEL', KEYS[1], 'wt') else redis.call('DEL', KEYS[1]) end
  return 1
end
return 0
`;
