import { PRELUDE } from './row.js';

/**
 * Inbox.takeStale. KEYS: pending. ARGV: key base, older-than ms, lease ms, limit, token prefix,
 * scan cap. Returns `{envelope, token, …}`, oldest claim first.
 *
 * Walks pending claims old enough, oldest first, and takes each whose lease key is gone with
 * `SET c:<member> token NX PX`, up to `limit`; one script, so concurrent relays never share a
 * claim. At most `scan cap` pending rows are looked at per call (those with live leases are
 * passed over), which bounds the script's time.
 */
export const TAKE_STALE = `${PRELUDE}
local base, limit, cap = ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[6])
local maxAt = nowMs() - tonumber(ARGV[2])
local taken, n, offset, scanned = {}, 0, 0, 0
while n < limit and scanned < cap do
  local page = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', maxAt, 'LIMIT', offset, 100)
  if #page == 0 then break end
  for _, member in ipairs(page) do
    scanned = scanned + 1
    local rowKey = base .. 'r:' .. member
    -- rows written by version 0.1 keep the envelope in the row
    local env = redis.call('HGET', rowKey, 's') == 'p'
      and (redis.call('GET', envKey(base, member)) or redis.call('HGET', rowKey, 'env'))
    if not env then
      redis.call('ZREM', KEYS[1], member)
    else
      offset = offset + 1
      if n < limit then
        local token = ARGV[5] .. (n + 1)
        if redis.call('SET', base .. 'c:' .. member, token, 'NX', 'PX', ARGV[3]) then
          redis.call('HSET', rowKey, 't', token)
          n = n + 1
          taken[#taken + 1] = env
          taken[#taken + 1] = token
        end
      end
    end
  end
end
return taken
`;

/**
 * One batch of Inbox.purge over one index (`open` or `done`, by receivedAt). KEYS: the index.
 * ARGV: key base, cutoff ms (exclusive), batch size, offset, which index (`open` or `done`).
 * Returns `{deleted, looked at, kept}`; the caller moves its offset past the kept ones.
 *
 * Deletes records received before the cutoff that are finished: enqueued ones (from `open`),
 * completed and discarded ones (from `done`), with their state index entries. Keeps received,
 * processing and retry-scheduled ones; drops index entries whose row is gone (expired after the
 * retention) or no longer in a state that index holds. Dead letters are in neither index.
 */
export const PURGE_BATCH = `
local base, which = ARGV[1], ARGV[5]
local page = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', ARGV[4], ARGV[3])
local deleted, kept = 0, 0
for _, member in ipairs(page) do
  local rowKey = base .. 'r:' .. member
  local s = redis.call('HGET', rowKey, 's')
  local finished = (which == 'open' and s == 'e') or (which == 'done' and (s == 'd' or s == 'z'))
  if finished then
    redis.call('DEL', rowKey, base .. 'c:' .. member, base .. 'e:' .. member)
    redis.call('ZREM', KEYS[1], member)
    redis.call('ZREM', base .. 's:' .. s, member)
    deleted = deleted + 1
  elseif which == 'open' and (s == 'p' or s == 'w' or s == 'r') then
    kept = kept + 1
  else
    redis.call('ZREM', KEYS[1], member)
  end
end
return {deleted, #page, kept}
`;

/**
 * One batch of pruning a state index (`s:<letter>`) of a state with a TTL. KEYS: the index. ARGV:
 * key base, the state letter, retention ms, batch size, offset. Returns `{dropped, looked at,
 * kept}`. Drops entries older than the retention whose row is gone or in another state: rows
 * that expired leave their entry behind. Entries of rows still in that state are kept (another
 * store on this prefix may use a longer retention).
 */
export const PRUNE_BATCH = `${PRELUDE}
local base, state = ARGV[1], ARGV[2]
local below = nowMs() - tonumber(ARGV[3])
local page = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. below, 'LIMIT', ARGV[5], ARGV[4])
local kept = 0
for _, member in ipairs(page) do
  if redis.call('HGET', base .. 'r:' .. member, 's') == state then
    kept = kept + 1
  else
    redis.call('ZREM', KEYS[1], member)
  end
end
return {#page - kept, #page, kept}
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
export const STATS = `${PRELUDE}
local base, cap = ARGV[1], tonumber(ARGV[3])
local below = nowMs() - tonumber(ARGV[2])
local function live(member, processed)
  local s = redis.call('HGET', base .. 'r:' .. member, 's')
  if processed then return s == 'd' or s == 'z' end
  return s == 'p' or s == 'e' or s == 'w' or s == 'r'
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
