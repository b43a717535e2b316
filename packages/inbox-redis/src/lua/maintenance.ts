import { NOW_MS } from './row.js';

/**
 * Inbox.takeStale. KEYS: pending. ARGV: key base, older-than ms, lease ms, limit, token prefix,
 * scan cap. Returns `{envelope, token, …}`, oldest claim first.
 *
 * Walks pending claims old enough, oldest first, and takes each whose lease key is gone with
 * `SET c:<member> token NX PX`, up to `limit`; one script, so concurrent relays never share a
 * claim. At most `scan cap` pending rows are looked at per call (those with live leases are
 * passed over), which bounds the script's time.
 */
export const TAKE_STALE = `${NOW_MS}
local base, limit, cap = ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[6])
local maxAt = nowMs() - tonumber(ARGV[2])
local taken, n, offset, scanned = {}, 0, 0, 0
while n < limit and scanned < cap do
  local page = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', maxAt, 'LIMIT', offset, 100)
  if #page == 0 then break end
  for _, member in ipairs(page) do
    scanned = scanned + 1
    local rowKey = base .. 'r:' .. member
    local row = redis.call('HMGET', rowKey, 's', 'env')
    if row[1] ~= 'p' then
      redis.call('ZREM', KEYS[1], member)
    else
      offset = offset + 1
      if n < limit then
        local token = ARGV[5] .. (n + 1)
        if redis.call('SET', base .. 'c:' .. member, token, 'NX', 'PX', ARGV[3]) then
          redis.call('HSET', rowKey, 't', token)
          n = n + 1
          taken[#taken + 1] = row[2]
          taken[#taken + 1] = token
        end
      end
    end
  end
end
return taken
`;

/**
 * One batch of Inbox.purge over one index (`open` or `done`). KEYS: the index. ARGV: key base,
 * cutoff ms (exclusive), batch size, offset, the state this index holds for purging (`e` or
 * `d`). Returns `{deleted, looked at, kept}`; the caller moves its offset past the kept ones.
 *
 * Deletes rows received before the cutoff in that state, never pending rows or rows under a live
 * processing lease; drops index entries whose row is gone (expired after the retention) or no
 * longer in that state. A processed row has no lease, so in `done` nothing is ever kept.
 */
export const PURGE_BATCH = `
local base, state = ARGV[1], ARGV[5]
local page = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', ARGV[4], ARGV[3])
local deleted, kept = 0, 0
for _, member in ipairs(page) do
  local rowKey = base .. 'r:' .. member
  local s = redis.call('HGET', rowKey, 's')
  local held = s == 'p' or (s == state and redis.call('EXISTS', base .. 'w:' .. member) == 1)
  if held and state == 'e' then
    kept = kept + 1
  else
    redis.call('ZREM', KEYS[1], member)
    if s == state and not held then
      redis.call('DEL', rowKey)
      deleted = deleted + 1
    end
  end
end
return {deleted, #page, kept}
`;

/**
 * Inbox.stats. KEYS: pending, open, done, conflicts. ARGV: key base, retention ms, prune cap.
 * Returns `{pending, enqueued, processed, conflicts, oldest receivedAt ms or ''}`.
 *
 * Rows leave by expiry after the retention without touching the indexes; so first up to `prune
 * cap` index entries older than the retention whose row is gone are dropped (an expired row was
 * received at least a retention ago), then the oldest unprocessed row still there is read. An entry is live while its row is in
 * the state its index stands for.
 */
export const STATS = `${NOW_MS}
local base, cap = ARGV[1], tonumber(ARGV[3])
local below = nowMs() - tonumber(ARGV[2])
local function live(member, processed)
  local s = redis.call('HGET', base .. 'r:' .. member, 's')
  if processed then return s == 'd' end
  return s == 'p' or s == 'e'
end
local function prune(index, processed)
  local page = redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. below, 'LIMIT', 0, cap)
  for _, member in ipairs(page) do
    if not live(member, processed) then redis.call('ZREM', index, member) end
  end
end
prune(KEYS[2], false)
prune(KEYS[3], true)
local oldest = ''
while true do
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if #first == 0 then break end
  if live(first[1], false) then
    oldest = first[2]
    break
  end
  redis.call('ZREM', KEYS[2], first[1])
end
local pending = redis.call('ZCARD', KEYS[1])
local open = redis.call('ZCARD', KEYS[2])
return {pending, open - pending, redis.call('ZCARD', KEYS[3]), redis.call('XLEN', KEYS[4]), oldest}
`;
