import { PRELUDE } from './row.js';

/**
 * Inbox.claim. KEYS: row, claim lease, pending, open. ARGV: member, payload hash, token, lease
 * ms, encoded envelope, receivedAt ms, key base, retention ms, type, key, trace id. Returns
 * `{status[, existing hash]}`.
 *
 * The lease is `SET c:<member> token NX PX leaseMs`: of any number of claims of one pending row,
 * only one finds the lease key gone and takes the claim over (`stale-pending`). A record that a
 * worker created first (the event reached it without this receiver) makes the claim a duplicate.
 */
export const CLAIM = `${PRELUDE}
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
if state then return {'duplicate'} end
local now = nowMs()
local fields = {'h', ARGV[2], 't', ARGV[3], 'ra', ARGV[6]}
redis.call('SET', envKey(ARGV[7], ARGV[1]), ARGV[5])
put(fields, 'ty', ARGV[9])
put(fields, 'k', ARGV[10])
put(fields, 'ti', ARGV[11])
enter(ARGV[7], KEYS[1], ARGV[1], false, 0, 'p', now, ARGV[8], historyEntry(now, 'p', 0, '', 'receiver', ''), fields)
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[1])
return {'new'}
`;

/**
 * Inbox.markEnqueued. KEYS: row, claim lease. ARGV: member, token, retention ms, key base.
 * Idempotent; a token that does not own the pending claim changes nothing. The claim ends (its
 * token and envelope go); a received record becomes enqueued and expires after the retention. A
 * record a worker already moved on (processing, completed, dead-lettered) keeps its state, and a
 * dead letter its envelope.
 */
export const MARK_ENQUEUED = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 't', 's', 'yn')
local state = row[2]
if row[1] ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], 't', 'ca', 'env')
if state ~= 'x' and state ~= 'z' then
  redis.call('DEL', KEYS[2], envKey(ARGV[4], ARGV[1]))
else
  redis.call('DEL', KEYS[2])
end
if state == 'p' then
  local now = nowMs()
  enter(ARGV[4], KEYS[1], ARGV[1], 'p', row[3], 'e', now, ARGV[3], historyEntry(now, 'e', 0, '', 'receiver', ''), {})
end
return 1
`;

/**
 * Inbox.release and RecordStore.release: the token says which lease it gives up. KEYS: row,
 * claim lease, work lease, pending, open. ARGV: member, token, retention ms, key base.
 *
 * A claim token drops the claim: a received record goes whole (so the sender's retry is `new`);
 * one a worker already moved on keeps its state and loses only the claim's fields. A processing
 * token drops the processing lease and puts the record back to enqueued, so the next delivery
 * can `begin` at once.
 */
export const RELEASE = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 's', 't', 'wt', 'n', 'cn', 'yn')
local state, claimToken, workToken = row[1], row[2], row[3]
if claimToken == ARGV[2] then
  redis.call('DEL', KEYS[2])
  if state == 'p' then
    redis.call('DEL', KEYS[1], envKey(ARGV[4], ARGV[1]))
    redis.call('ZREM', KEYS[4], ARGV[1])
    redis.call('ZREM', KEYS[5], ARGV[1])
    return 1
  end
  redis.call('HDEL', KEYS[1], 't', 'ca')
  if state ~= 'x' and state ~= 'z' then redis.call('DEL', envKey(ARGV[4], ARGV[1])) end
  return 1
end
if workToken == ARGV[2] and state == 'w' then
  local now = nowMs()
  redis.call('DEL', KEYS[3])
  redis.call('HDEL', KEYS[1], 'wt')
  enter(ARGV[4], KEYS[1], ARGV[1], 'w', row[6], 'e', now, ARGV[3], historyEntry(now, 'e', row[4], '', row[5], ''), {})
  return 1
end
return 0
`;

/**
 * InboxOutcomes.markProcessed. KEYS: row, claim lease, open, done. ARGV: member, retention ms,
 * key base. Returns 1 when it changed the row. The worker's record, in another store, finished
 * the event: a received or enqueued record becomes completed (out of `open`, into `done`, with
 * the retention's TTL), its claim and envelope gone, so the relay passes it over and a late
 * `markEnqueued` changes nothing. Any other state, or no row, is left as it is. Idempotent.
 */
export const MARK_PROCESSED = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 's', 'yn', 'ra')
local state = row[1]
if state ~= 'p' and state ~= 'e' then return 0 end
local now = nowMs()
redis.call('DEL', KEYS[2], envKey(ARGV[3], ARGV[1]))
redis.call('HDEL', KEYS[1], 't', 'ca', 'env')
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], row[3] or now, ARGV[1])
enter(ARGV[3], KEYS[1], ARGV[1], state, row[2], 'd', now, ARGV[2], historyEntry(now, 'd', 0, '', 'worker', ''), {})
return 1
`;
