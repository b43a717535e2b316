import { PRELUDE, RECORD_FIELDS } from './row.js';

const FIELDS = `{${RECORD_FIELDS.map((f) => `'${f}'`).join(', ')}}`;

/**
 * The lowest score of a state index worth reading: `lo`, raised to the retention floor for
 * states with a TTL (`retention` > 0), since a row in such a state expires `retention` after its
 * last change and an older entry can only be one left behind. Returns the range argument.
 */
const FLOOR = `
local function floorOf(lo, open, retention, now)
  if retention > 0 then
    local floor = now - retention
    if lo == '-inf' or tonumber(lo) < floor then return floor end
  end
  return (open and '(' or '') .. lo
end
`;

/**
 * One batch of `list`/`count` over one state index. KEYS: the index. ARGV: key base, state
 * letter, low score (`-inf` or ms), `1` when the low score is exclusive, high score (exclusive,
 * ms, or `+inf`), batch size, retention ms (`0` for states without a TTL).
 *
 * Returns `{last score or '', 1 when the index has nothing further, member, score, <RECORD_FIELDS
 * values>, member, score, …}`. A batch never ends inside a run of equal scores (the rest of the
 * run is read whole), so the caller can order it by (score, source, id) and continue after the
 * last score. Entries whose row is gone or in another state are dropped from the index.
 */
export const LIST_BATCH = `${PRELUDE}${FLOOR}
local FIELDS = ${FIELDS}
local base, state, batch = ARGV[1], ARGV[2], tonumber(ARGV[6])
local lo = floorOf(ARGV[3], ARGV[4] == '1', tonumber(ARGV[7]), nowMs())
local hi = ARGV[5] == '+inf' and '+inf' or '(' .. ARGV[5]
local page = redis.call('ZRANGE', KEYS[1], lo, hi, 'BYSCORE', 'LIMIT', 0, batch, 'WITHSCORES')
local exhausted = #page < 2 * batch
local last = page[#page]
if not exhausted then
  local whole = {}
  for i = 1, #page, 2 do
    if page[i + 1] ~= last then
      whole[#whole + 1] = page[i]
      whole[#whole + 1] = page[i + 1]
    end
  end
  local run = redis.call('ZRANGE', KEYS[1], last, last, 'BYSCORE', 'WITHSCORES')
  for i = 1, #run do whole[#whole + 1] = run[i] end
  page = whole
end
local out = {last or '', exhausted and 1 or 0}
for i = 1, #page, 2 do
  local row = redis.call('HMGET', base .. 'r:' .. page[i], unpack(FIELDS))
  if row[1] == state then
    out[#out + 1] = page[i]
    out[#out + 1] = page[i + 1]
    for j = 1, #FIELDS do out[#out + 1] = row[j] end
  else
    redis.call('ZREM', KEYS[1], page[i])
  end
end
return out
`;

/**
 * RecordStore.get. KEYS: row, envelope. Returns `{envelope or nil, field, value, …}` (no fields:
 * no record). One script, so the envelope and the row are read at one instant.
 */
export const READ = `
local out = {redis.call('GET', KEYS[2])}
local row = redis.call('HGETALL', KEYS[1])
for i = 1, #row do out[i + 1] = row[i] end
return out
`;

/**
 * `count` with no filter beyond state and age. KEYS: the state indexes to count. ARGV: low score
 * (inclusive, `-inf` or ms), high score (exclusive, ms, or `+inf`), then per key its retention ms
 * (`0` for states without a TTL). Returns the number of entries in range: every state change
 * moves the entry in the same script, so only entries of expired rows could be wrong, and those
 * lie below the retention floor.
 */
export const COUNT = `${PRELUDE}${FLOOR}
local now, total = nowMs(), 0
local hi = ARGV[2] == '+inf' and '+inf' or '(' .. ARGV[2]
for i, key in ipairs(KEYS) do
  total = total + redis.call('ZCOUNT', key, floorOf(ARGV[1], false, tonumber(ARGV[2 + i]), now), hi)
end
return total
`;
