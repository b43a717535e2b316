import { PRELUDE } from './row.js';

/**
 * RecordStore.begin. KEYS: row, work lease, open. ARGV: token, lease ms, retention ms, key base,
 * member, attempt, consumer, redrive actor, type, key, trace id, receivedAt ms (each `''` when
 * absent). Returns `{'processed'}`, `{'dead-lettered'}`, `{'acquired'}` or `{'busy', remaining ms}`.
 *
 * The lease is `SET w:<member> token NX PX leaseMs`: the key exists only while a record is
 * processing, so of any number of concurrent begins one acquires. The record of an event that
 * never passed a receiver is created here, from the envelope's fields.
 */
export const BEGIN = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 's', 'yn', 'h', 'ra')
local state = row[1]
if state == 'd' or state == 'z' then return {'processed'} end
if state == 'x' and ARGV[8] == '' then return {'dead-lettered'} end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {'busy', redis.call('PTTL', KEYS[2])}
end
local now = nowMs()
local fields = {'wt', ARGV[1], 'n', ARGV[6]}
local note = ''
if not state then
  put(fields, 'ra', ARGV[12] ~= '' and ARGV[12] or now)
  put(fields, 'ty', ARGV[9])
  put(fields, 'k', ARGV[10])
  put(fields, 'ti', ARGV[11])
elseif state == 'x' then
  note = 'redriven by ' .. ARGV[8]
  if row[3] then redis.call('ZADD', KEYS[3], row[4] or now, ARGV[5]) end
end
if state == 'p' or state == 'x' then redis.call('PEXPIRE', envKey(ARGV[4], ARGV[5]), ARGV[3]) end
if state == 'r' then redis.call('HDEL', KEYS[1], 'na') end
if ARGV[7] == '' then redis.call('HDEL', KEYS[1], 'cn') else put(fields, 'cn', ARGV[7]) end
enter(ARGV[4], KEYS[1], ARGV[5], state, row[2], 'w', now, ARGV[3], historyEntry(now, 'w', ARGV[6], '', ARGV[7], note), fields)
return {'acquired'}
`;

/** RecordStore.extend. KEYS: row, work lease. ARGV: token, lease ms. Returns 1 or 0. */
export const EXTEND = `
local row = redis.call('HMGET', KEYS[1], 'wt', 's')
if row[1] ~= ARGV[1] or row[2] ~= 'w' then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
`;

/**
 * RecordStore.complete. KEYS: row, work lease, claim lease, open, done. ARGV: member, token,
 * retention ms, key base, note (`''`: none). Idempotent: only the token that owns a processing record acts. A
 * still-pending claim ends here too: the event is handled, so the relay must not publish it again.
 */
export const COMPLETE = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 'wt', 's', 'ra', 'n', 'cn', 'yn', 't')
if row[1] ~= ARGV[2] or row[2] ~= 'w' then return 0 end
local now = nowMs()
if row[7] then
  redis.call('DEL', KEYS[2], KEYS[3], envKey(ARGV[4], ARGV[1]))
  redis.call('HDEL', KEYS[1], 'wt', 't', 'ca')
else
  redis.call('DEL', KEYS[2], envKey(ARGV[4], ARGV[1]))
  redis.call('HDEL', KEYS[1], 'wt')
end
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[5], row[3] or now, ARGV[1])
enter(ARGV[4], KEYS[1], ARGV[1], 'w', row[6], 'd', now, ARGV[3], historyEntry(now, 'd', row[4], '', row[5], ARGV[5]), {})
return 1
`;

/**
 * RecordStore.scheduleRetry. KEYS: row, work lease. ARGV: member, token, retention ms, key base,
 * nextAttemptAt ms, lastError code, name, message (code `''`: keep the one recorded). Frees the
 * lease.
 */
export const SCHEDULE_RETRY = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 'wt', 's', 'n', 'cn', 'yn')
if row[1] ~= ARGV[2] or row[2] ~= 'w' then return 0 end
local now = nowMs()
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[1], 'wt')
local fields = {'na', ARGV[5]}
if ARGV[6] ~= '' then
  fields[#fields + 1] = 'ec'; fields[#fields + 1] = ARGV[6]
  fields[#fields + 1] = 'en'; fields[#fields + 1] = ARGV[7]
  fields[#fields + 1] = 'em'; fields[#fields + 1] = ARGV[8]
end
enter(ARGV[4], KEYS[1], ARGV[1], 'w', row[5], 'r', now, ARGV[3], historyEntry(now, 'r', row[3], ARGV[6], row[4], ''), fields)
return 1
`;

/**
 * RecordStore.deadLetter. KEYS: row, work lease, open. ARGV: member, token (`''`: none), retention
 * ms, key base, encoded envelope, reason, lastError code, name, message (code `''`: keep),
 * attempts, actor, note, type, key, trace id, receivedAt ms. Returns 1 when it recorded the dead
 * letter.
 *
 * Never over a completed, discarded or already dead-lettered record, nor over a processing one
 * whose live lease another token holds. The row keeps no TTL while dead-lettered.
 */
export const DEAD_LETTER = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 's', 'wt', 'n', 'cn', 'yn')
local state = row[1]
if state == 'd' or state == 'z' or state == 'x' then return 0 end
if state == 'w' and row[2] ~= ARGV[2] and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local now = nowMs()
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[1], 'wt', 'na')
redis.call('ZREM', KEYS[3], ARGV[1])
local attempts = math.max(tonumber(row[3]) or 0, tonumber(ARGV[10]) or 0)
redis.call('SET', envKey(ARGV[4], ARGV[1]), ARGV[5])
local fields = {'rs', ARGV[6], 'n', attempts}
if ARGV[7] ~= '' then
  fields[#fields + 1] = 'ec'; fields[#fields + 1] = ARGV[7]
  fields[#fields + 1] = 'en'; fields[#fields + 1] = ARGV[8]
  fields[#fields + 1] = 'em'; fields[#fields + 1] = ARGV[9]
end
if not state then
  put(fields, 'ra', ARGV[16] ~= '' and ARGV[16] or now)
  put(fields, 'ty', ARGV[13])
  put(fields, 'k', ARGV[14])
  put(fields, 'ti', ARGV[15])
end
local actor = ARGV[11]
if actor == '' then actor = row[4] or '' end
enter(ARGV[4], KEYS[1], ARGV[1], state, row[5], 'x', now, ARGV[3], historyEntry(now, 'x', ARGV[10], ARGV[7], actor, ARGV[12]), fields)
return 1
`;

/**
 * RecordStore.act. KEYS: row, open, done. ARGV: member, kind (`redriven` or `discarded`), actor,
 * retention ms, key base. Returns 1, or 0 (nothing changed) when the record is not dead-lettered.
 * Either way the record and its envelope get their TTL back: it is an ordinary enqueued or
 * finished record again.
 */
export const ACT = `${PRELUDE}
local row = redis.call('HMGET', KEYS[1], 's', 'h', 'ra', 'yn')
if row[1] ~= 'x' then return 0 end
local now = nowMs()
redis.call('PEXPIRE', envKey(ARGV[5], ARGV[1]), ARGV[4])
if ARGV[2] == 'redriven' then
  if row[2] then redis.call('ZADD', KEYS[2], row[3] or now, ARGV[1]) end
  enter(ARGV[5], KEYS[1], ARGV[1], 'x', row[4], 'e', now, ARGV[4], historyEntry(now, 'e', 0, '', ARGV[3], 'redriven'), {'n', 0})
else
  redis.call('ZADD', KEYS[3], row[3] or now, ARGV[1])
  enter(ARGV[5], KEYS[1], ARGV[1], 'x', row[4], 'z', now, ARGV[4], historyEntry(now, 'z', 0, '', ARGV[3], 'purged'), {})
end
return 1
`;
